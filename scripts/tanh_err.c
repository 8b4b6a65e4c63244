/*
 * tanh_err.c: measures the AVX-512 Tanh kernel of native/runtime/csrc/
 * rx_kernels.c (rx_tanhq8, rx_tanh8; see the comment above them).
 *
 *   err    for each of Tanh's three pieces, the greatest error of the
 *          short float64 evaluation rx_tanhq8 on every float32 x in
 *          [2^-12, bound] (the piece's range; piece 3 clamps every larger
 *          |x| to 9.03125), in float64 ULPs of the result and relative,
 *          against long double tanhl (x87: 64-bit significand, 2^-11
 *          float64 ULPs or better); the piece's Ziv band (RX_TANH_BAND1..3)
 *          must exceed it plus 3.5 ULPs (SLEEF's tanh).
 *   check  every float32 input through the AVX-512 kernel, once with the
 *          pieces it chooses and once through each piece alone (all inputs
 *          within the piece's bound), against the SSE2 kernel
 *          (SLEEF's tanh rounded once): the number of results that differ
 *          in any bit (NaNs included) and of lanes sent to SLEEF.
 *
 * Build and run from the repository root (x86-64 with AVX-512, libsleef):
 *
 *   gcc -std=gnu11 -O2 -ffp-contract=off -fopenmp -Inative/runtime/csrc \
 *       scripts/tanh_err.c native/runtime/csrc/rx_context.c -lsleef -lm \
 *       -o /tmp/tanh_err && /tmp/tanh_err err && /tmp/tanh_err check
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static long long tanh_hard;
#define RX_ZIV_COUNT(op, lanes) ((op) == 0 ? (void)__atomic_add_fetch(&tanh_hard, __builtin_popcount(lanes), __ATOMIC_RELAXED) : (void)0)
#include "rx_kernels.c"

static float f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static uint32_t u32(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static const float bounds[4] = {0, 1.0f, 6.0f, 9.03125f};
static const int64_t bands[4] = {0, RX_TANH_BAND1, RX_TANH_BAND2, RX_TANH_BAND3};

RX_T512F static void err(int k)
{
	double maxu = 0, maxr = 0;
	const uint32_t lo = u32(0x1p-12f), hi = u32(bounds[k]);
#pragma omp parallel for reduction(max : maxu, maxr) schedule(static, 65536)
	for (uint32_t u = lo; u <= hi; u += 8) {
		float xs[8];
		double ts[8];
		for (int j = 0; j < 8; j++)
			xs[j] = f32(u + j);
		_mm512_storeu_pd(ts, rx_tanhq8(rx_ld8d(xs), k));
		for (int j = 0; j < 8 && u + j <= hi; j++) {
			long double r = tanhl((long double)xs[j]);
			int e;
			frexp(ts[j], &e);
			double eu = (double)(fabsl((long double)ts[j] - r) / ldexpl(1, e - 53));
			double er = (double)fabsl(((long double)ts[j] - r) / r);
			maxu = eu > maxu ? eu : maxu;
			maxr = er > maxr ? er : maxr;
		}
	}
	printf("piece %d on [2^-12, %g]: max error %.1f float64 ULPs (2^%.3f), relative %.4g (2^%.3f); band %lld (2^%.3f)\n",
	       k, bounds[k], maxu, log2(maxu), maxr, log2(maxr), (long long)bands[k], log2((double)bands[k]));
}

/* rx_tanh_forced is rx_tanh_avx512 with every element through piece k. */
RX_T512F static void rx_tanh_forced(float *o, const float *x, int64_t n, int k)
{
	for (int64_t i = 0; i < n; i += 8)
		rx_st8d(o + i, rx_tanh8(rx_ld8d(x + i), k));
}

/* check runs every float32 through rx_tanh_avx512 (k == 0, the pieces as it
 * chooses them) or through piece k: every float32 for piece 3, every one
 * within the bound (so no NaN) for pieces 1 and 2. */
static void check(int k)
{
	enum { N = 1 << 20 };
	long long diff = 0, n = 0;
	tanh_hard = 0;
#pragma omp parallel for reduction(+ : diff, n) schedule(static, 1)
	for (uint64_t base = 0; base < (1ull << 32); base += N) {
		static __thread float x[N], a[N], b[N];
		int64_t m = 0;
		for (int i = 0; i < N; i++) {
			float v = f32((uint32_t)(base + (uint64_t)i));
			if (k == 0 || k == 3 || fabsf(v) <= bounds[k])
				x[m++] = v;
		}
		while (m % 8)
			x[m++] = 0;
		if (k == 0)
			rx_tanh_avx512(a, x, m);
		else
			rx_tanh_forced(a, x, m, k);
		rx_tanh_sse2(b, x, m);
		n += m;
		for (int64_t i = 0; i < m; i++) {
			if (u32(a[i]) != u32(b[i])) {
#pragma omp critical
				if (diff < 5)
					printf("x=%a (%08x): avx512 %a (%08x), sse2 %a (%08x)\n", x[i], u32(x[i]), a[i], u32(a[i]), b[i], u32(b[i]));
				diff++;
			}
		}
	}
	if (k == 0)
		printf("all 2^32 inputs, pieces as chosen: %lld results differ from sse2; %lld lanes went to SLEEF\n", diff, tanh_hard);
	else
		printf("%lld inputs (%s%g) through piece %d: %lld results differ from sse2; %lld lanes went to SLEEF\n",
		       n, k == 3 ? "all, the clamp at " : "|x| <= ", bounds[k], k, diff, tanh_hard);
}

int main(int argc, char **argv)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq")) {
		fprintf(stderr, "tanh_err: needs AVX-512 (F, DQ)\n");
		return 2;
	}
	if (argc == 2 && !strcmp(argv[1], "err"))
		for (int k = 1; k <= 3; k++)
			err(k);
	else if (argc == 2 && !strcmp(argv[1], "check"))
		for (int k = 0; k <= 3; k++)
			check(k);
	else {
		fprintf(stderr, "usage: tanh_err err|check\n");
		return 2;
	}
	return 0;
}
