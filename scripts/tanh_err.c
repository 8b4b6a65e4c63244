/*
 * tanh_err.c: measures the AVX-512 Tanh kernel of native/runtime/csrc/
 * rx_kernels.c (rx_tanhq8, rx_tanh8; see the comment above them).
 *
 *   err    the greatest error of the short float64 evaluation rx_tanhq8 on
 *          every float32 x in [2^-12, 9.03125] (the range where its result
 *          is used; the clamp makes every larger |x| the value at 9.03125),
 *          in float64 ULPs of the result and relative, against long double
 *          tanhl (x87: 64-bit significand, 2^-11 float64 ULPs or better);
 *          Tanh's Ziv band (RX_TANH_BAND) must exceed it plus 3.5 ULPs.
 *   check  every one of the 2^32 float32 inputs through the AVX-512 kernel
 *          and the SSE2 one (SLEEF's tanh rounded once): the number of
 *          results that differ in any bit (NaNs included) and the fraction
 *          of lanes the short path sends to SLEEF.
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

RX_T512F static void err(void)
{
	double maxu = 0, maxr = 0;
	const uint32_t lo = u32(0x1p-12f), hi = u32(9.03125f);
#pragma omp parallel for reduction(max : maxu, maxr) schedule(static, 65536)
	for (uint32_t u = lo; u <= hi; u += 8) {
		float xs[8];
		double ts[8];
		for (int k = 0; k < 8; k++)
			xs[k] = f32(u + k);
		_mm512_storeu_pd(ts, rx_tanhq8(rx_ld8d(xs)));
		for (int k = 0; k < 8 && u + k <= hi; k++) {
			long double r = tanhl((long double)xs[k]);
			int e;
			frexp(ts[k], &e);
			double eu = (double)(fabsl((long double)ts[k] - r) / ldexpl(1, e - 53));
			double er = (double)fabsl(((long double)ts[k] - r) / r);
			maxu = eu > maxu ? eu : maxu;
			maxr = er > maxr ? er : maxr;
		}
	}
	printf("rx_tanhq8 on [2^-12, 9.03125]: max error %.1f float64 ULPs (2^%.3f), relative %.4g (2^%.3f); band %d (2^%.3f)\n",
	       maxu, log2(maxu), maxr, log2(maxr), RX_TANH_BAND, log2(RX_TANH_BAND));
}

static void check(void)
{
	enum { N = 1 << 20 };
	long long diff = 0;
#pragma omp parallel for reduction(+ : diff) schedule(static, 1)
	for (uint64_t base = 0; base < (1ull << 32); base += N) {
		static __thread float x[N], a[N], b[N];
		for (int i = 0; i < N; i++)
			x[i] = f32((uint32_t)(base + (uint64_t)i));
		rx_tanh_avx512(a, x, N);
		rx_tanh_sse2(b, x, N);
		for (int i = 0; i < N; i++) {
			if (u32(a[i]) != u32(b[i])) {
#pragma omp critical
				if (diff < 5)
					printf("x=%a (%08x): avx512 %a (%08x), sse2 %a (%08x)\n", x[i], u32(x[i]), a[i], u32(a[i]), b[i], u32(b[i]));
				diff++;
			}
		}
	}
	printf("all 2^32 inputs: %lld results differ from sse2; %lld lanes (%.3g) went to SLEEF\n", diff, tanh_hard, tanh_hard / 0x1p32);
}

int main(int argc, char **argv)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq")) {
		fprintf(stderr, "tanh_err: needs AVX-512 (F, DQ)\n");
		return 2;
	}
	if (argc == 2 && !strcmp(argv[1], "err"))
		err();
	else if (argc == 2 && !strcmp(argv[1], "check"))
		check();
	else {
		fprintf(stderr, "usage: tanh_err err|check\n");
		return 2;
	}
	return 0;
}
