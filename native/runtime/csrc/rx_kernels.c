/*
 * rx_kernels.c: rxeq's own float32 kernels behind rx_runtime.h (executor
 * "native"), linked with rx_context.c into one runtime library.
 *
 * Numerics are float32 throughout, built with -ffp-contract=off and written
 * with separate multiplies and adds (never an FMA), so that no result
 * depends on contraction:
 *
 *   - Tanh, Exp, Log and Sigmoid are evaluated in float64 from the float32
 *     argument and rounded to float32 once, the fallback's method: SLEEF's
 *     vectorised float64 functions (exp and log within 1.0 float64 ULP,
 *     u10; tanh within 3.5 float64 ULPs, u35), which is 2^-27 of a float32
 *     ULP before the rounding, so the result is the correctly rounded one
 *     unless the exact value lies that close to a rounding boundary; without
 *     SLEEF (RX_NO_SLEEF, or no x86-64) libm's float64 functions, one
 *     element at a time. On AVX-512, Tanh, Exp and Sigmoid take a shorter
 *     float64 path first and fall back to SLEEF lane by lane where its
 *     rounding is in doubt, with the same results (see "short float64
 *     evaluations" below). Measured by native/ulp_test.go against Go's math
 *     package: no op is worse than the fallback's.
 *   - Sqrt is correctly rounded (sqrtss/sqrtps or sqrtf); Add, Sub, Mul, Div
 *     are IEEE float32 operations (exact rounding); Neg, Abs and Relu are
 *     exact. Relu keeps NaN; Maximum/Minimum/Max propagate NaN.
 *   - MatMul, Sum and Softmax accumulate in increasing index order from 0
 *     (MatMul: each product rounded, then added), so blocking and vector
 *     width never change a result; Argmax returns the first maximum and the
 *     first NaN.
 *
 * ISA: the widest of AVX-512 (F, DQ), AVX2 (with FMA, which SLEEF's AVX2
 * functions require), SSE2 and plain C that both the CPU supports
 * (__builtin_cpu_supports) and the build allows (RX_ISA_CAP, set by package
 * native from the same detection and part of the runtime's cache key) is
 * found once per process, when the library is loaded (rx_isa_init), which
 * fills the kernels of that ISA and of every narrower one. A call runs at
 * that widest ISA unless it asks for a narrower one (rx_status.isa_cap:
 * native's variants native-avx2, native-sse2 and native-c share one
 * library and one process with native), and says which ran (rx_status.isa).
 * Every ISA gives the same bits: the float64 transcendentals are rounded once,
 * and the float32 loops do the same operations in the same order.
 *
 * The runtime API runs one op per call, so a large batch streams each
 * intermediate through memory once per op: kernels tile within an op
 * (Softmax exponentiates a tile of rows at a time; MatMul keeps a panel of
 * accumulators in registers over the whole K). The fused entry points
 * (rx_matmul_bt, rx_matmul_bias, their _tanh forms, rx_ew2, rx_ew_const;
 * see "fused MatMul" and "fused elementwise pairs") run the op groups codegen
 * fuses in one pass, with the bits of the ops one by one.
 */
#include "rx_internal.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define RX_FN

/* RX_ISA_CAP is the widest ISA the build allows: 0 plain C, 1 SSE2, 2 AVX2,
 * 3 AVX-512. */
#ifndef RX_ISA_CAP
#define RX_ISA_CAP 3
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RX_X86 1
#include <immintrin.h>
#endif
#if defined(RX_X86) && !defined(RX_NO_SLEEF)
#define RX_SLEEF 1
#endif

/* Vector types (GCC/clang vector extensions): arithmetic on them is
 * elementwise IEEE float32 in the ISA of the function that uses them. */
typedef float rx_v4f __attribute__((vector_size(16)));
typedef float rx_v8f __attribute__((vector_size(32)));
typedef float rx_v16f __attribute__((vector_size(64)));
typedef int32_t rx_v4i __attribute__((vector_size(16)));

#define RX_LOAD(VT, p) ({ VT v_; memcpy(&v_, (p), sizeof v_); v_; })
#define RX_STORE(p, v) do { __typeof__(v) s_ = (v); memcpy((p), &s_, sizeof s_); } while (0)
/* RX_SPLAT broadcasts a float: s - 0 is s for every s, -0 and NaN included. */
#define RX_SPLAT(VT, s) ((s) - (VT){0})

/* NaN-propagating max/min with Go's math.Max/Min treatment of signed zeros. */
static inline float rx_maxf(float a, float b)
{
	if (a != a)
		return a;
	if (b != b)
		return b;
	if (a == 0 && b == 0)
		return signbit(a) ? b : a;
	return a > b ? a : b;
}

static inline float rx_minf(float a, float b)
{
	if (a != a)
		return a;
	if (b != b)
		return b;
	if (a == 0 && b == 0)
		return signbit(a) ? a : b;
	return a < b ? a : b;
}


/* ---- float64 transcendentals, per ISA ----------------------------------
 * A map kernel computes o[i] = f(x[i]) for i < n (o may be x): the float32
 * argument widened to float64, f in float64, rounded to float32 once. */

typedef void (*rx_map_fn)(float *o, const float *x, int64_t n);

static float rx_tanh1(float a) { return (float)tanh((double)a); }
static float rx_exp1(float a) { return (float)exp((double)a); }
static float rx_log1(float a) { return (float)log((double)a); }
static float rx_sigmoid1(float a) { return (float)(1.0 / (1.0 + exp(-(double)a))); }

/* The plain C map kernels: libm's float64 functions (glibc: within 1
 * float64 ULP), one element at a time. */
#define RX_MAP_SCALAR(NAME, F)                                           \
	static void NAME(float *o, const float *x, int64_t n)            \
	{                                                                \
		for (int64_t i = 0; i < n; i++)                          \
			o[i] = F(x[i]);                                  \
	}
RX_MAP_SCALAR(rx_tanh_c, rx_tanh1)
RX_MAP_SCALAR(rx_exp_c, rx_exp1)
RX_MAP_SCALAR(rx_log_c, rx_log1)
RX_MAP_SCALAR(rx_sigmoid_c, rx_sigmoid1)

#ifdef RX_SLEEF
/* SLEEF 3.5's vectorised float64 functions (libsleef), declared here
 * because sleef.h declares the AVX2 and AVX-512 ones only to translation
 * units compiled for those ISAs. u10: within 1.0 ULP; u35: within 3.5. */
#define RX_T512 __attribute__((target("avx512f,avx512dq")))
#define RX_T256 __attribute__((target("avx2,fma")))
RX_T512 __m512d Sleef_expd8_u10avx512f(__m512d);
RX_T512 __m512d Sleef_logd8_u10avx512f(__m512d);
RX_T512 __m512d Sleef_tanhd8_u35avx512f(__m512d);
RX_T256 __m256d Sleef_expd4_u10avx2(__m256d);
RX_T256 __m256d Sleef_logd4_u10avx2(__m256d);
RX_T256 __m256d Sleef_tanhd4_u35avx2(__m256d);
__m128d Sleef_expd2_u10sse2(__m128d);
__m128d Sleef_logd2_u10sse2(__m128d);
__m128d Sleef_tanhd2_u35sse2(__m128d);

/* RX_MAP_VEC defines a map kernel over W lanes of float64: LD widens W
 * floats, F computes, ST rounds and stores W floats. The tail goes through
 * a zero-padded W-element buffer, so every element takes the same path. */
#define RX_MAP_VEC(NAME, TGT, W, VD, LD, ST, F)                            \
	TGT static void NAME(float *o, const float *x, int64_t n)          \
	{                                                                  \
		int64_t i = 0;                                             \
		for (; i + W <= n; i += W) {                               \
			VD v = LD(x + i);                                  \
			ST(o + i, F(v));                                   \
		}                                                          \
		if (i < n) {                                               \
			float t[W] = {0};                                  \
			memcpy(t, x + i, (size_t)(n - i) * sizeof(float)); \
			VD v = LD(t);                                      \
			ST(t, F(v));                                       \
			memcpy(o + i, t, (size_t)(n - i) * sizeof(float)); \
		}                                                          \
	}

RX_T512 static inline __m512d rx_ld8d(const float *p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
RX_T512 static inline void rx_st8d(float *p, __m512d v) { _mm256_storeu_ps(p, _mm512_cvtpd_ps(v)); }
RX_T512 static inline __m512d rx_sigmoid8(__m512d v)
{
	__m512d one = _mm512_set1_pd(1.0);
	return _mm512_div_pd(one, _mm512_add_pd(one, Sleef_expd8_u10avx512f(_mm512_sub_pd(_mm512_setzero_pd(), v))));
}

/* ---- AVX-512: short float64 evaluations with a rounding test ------------
 * Tanh, Exp and Sigmoid on AVX-512 first evaluate a short float64
 * approximation (FMA allowed) and round it to float32. The result is the
 * correctly rounded one unless the exact value lies within the
 * approximation's error of a float32 rounding midpoint; a lane whose
 * float64 value lies within a band of float64 ULPs around a midpoint wider
 * than that error plus the SLEEF function's (rx_near8), or whose argument is
 * outside the short path's range (subnormal or overflowing results, NaN),
 * is recomputed with the SLEEF function above (Ziv's test). Both values
 * then round to the same float32 as the exact value, so the result is bit
 * for bit the SLEEF path's on every input and every ISA (native/ulp_test.go
 * checks all 2^32 inputs with RXEQ_ULP_EXHAUSTIVE=1), and FMA contraction
 * in the short path cannot show.
 *
 *   - Exp and Sigmoid: exp(r) from a 16-entry table of 2^(j/16) and a
 *     degree-6 expm1 polynomial on |r| <= ln2/32 (relative error below
 *     2^-40; rx_expq8), a band of 2^13 ULPs (2^-39 relative).
 *   - Tanh: a rational function, tanh(x) ~ x P(x^2) / Q(x^2), in one of
 *     three pieces (rx_tanhq8): P and Q of degree 2 and 3 for |x| <= 1, 4
 *     and 5 for |x| <= 6, 5 and 5 for |x| <= 9.03125 (beyond which tanh
 *     rounds to ±1); no table, no exponent arithmetic, Horner with FMA and
 *     one division. P and Q are scaled so that Q is monic: the first Horner
 *     step of Q is an addition, which takes the FP adders instead of the FMA
 *     units (4% faster). rx_tanh_avx512 gives each block of 64 elements the
 *     cheapest piece that covers all of them (6, 10 or 11 multiplies and
 *     FMAs and one addition per 8 lanes): hidden activations, mostly within
 *     ±6, take the second, values already squashed (|x| <= 1) the first.
 *     (The second piece covered |x| <= 4.5 with degrees 4 and 4, one FMA
 *     fewer: covering 6 takes 4% less time per Tanh on score_pipeline's
 *     data, whose hidden blocks of 64 reach beyond 4.5 half the time, and 1%
 *     more on score_mlp's.) scripts/fit_tanh.py derives each P and Q
 *     (rational Remez for the minimax relative error in 60-digit arithmetic,
 *     then divided by Q's leading coefficient and rounded to float64:
 *     2^-41.8, 2^-37.4, 2^-34.7); scripts/tanh_err.c measures each piece's
 *     total error in float64 (approximation, roundings, FMAs) on every
 *     float32 argument in its range against long double tanhl: at most 2319,
 *     51137 and 333700 float64 ULPs (2^11.2, 2^15.6, 2^18.3) of the result;
 *     the bands are 2^12, 2^16 and 2^19 ULPs, more than that plus the 3.5
 *     ULPs of SLEEF's tanh (powers of two, for a two-operation test,
 *     rx_near8p). A lane with a uniformly placed result falls in them with
 *     probability 2 band / 2^29: 0.0015%, 0.024% and 0.2%. The script also
 *     checks every float32 through each piece and through the kernel: no bit
 *     differs from the SSE2 (SLEEF) kernel.
 *     (Measured on Zen 4 and rejected: vrcp14pd with Newton steps instead
 *     of vdivpd, for every vector or for one in two, three or four;
 *     Estrin's scheme instead of Horner's; two vectors per iteration, or
 *     GCC unrolling the loop by 2, 4 or 8; the division in float32 with a
 *     Newton step; blocks of 16 or 32 elements, or of 256 or more; a
 *     degree 2/2 piece for |x| <= 0.78125 (one FMA fewer, no faster: the
 *     loop's vdivpd, 2.5 ns per vector, leaves FMAs idle); piece 3
 *     without the clamp and the NaN test for blocks within 9.03125; a
 *     second piece of degrees 5 and 5 for |x| <= 6 (2^-43.1, but slower
 *     than 4 and 5 on score_mlp's data); and
 *     one Ziv branch per block for piece 3, whose blocks take the second
 *     pass too often, with or without the masks stored per vector.) */
#define RX_T512F __attribute__((target("avx512f,avx512dq,fma")))

/* RX_ZIV_COUNT(op, lanes) is called with the mask of the lanes that a short
 * path sends to SLEEF (op: 0 Tanh, 1 Exp, 2 Sigmoid), never otherwise. It
 * does nothing unless defined before this file is included: a test driver
 * that includes rx_kernels.c counts the lanes with it. */
#ifndef RX_ZIV_COUNT
#define RX_ZIV_COUNT(op, lanes) ((void)0)
#endif

static const double rx_exp2tab[16] __attribute__((aligned(64))) = {
	0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
	0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
	0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
	0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0};

/* rx_expq8 splits exp(y), |y| < 700, into S * (1 + q): S = 2^(k/16) (the
 * table entry scaled by a power of two, exactly) and q = expm1(r) for
 * r = y - k ln2/16, |r| <= ln2/32 (Taylor to degree 6: error below 2^-45
 * of q). */
RX_T512F static inline __m512d rx_expq8(__m512d y, __m512d *q)
{
	const __m512d magic = _mm512_set1_pd(0x1.8p52);
	__m512d kd = _mm512_fmadd_pd(y, _mm512_set1_pd(0x1.71547652b82fep+4), magic);
	__m512d kf = _mm512_sub_pd(kd, magic);
	__m512d r = _mm512_fnmadd_pd(kf, _mm512_set1_pd(0x1.62e42fefa39efp-5), y);
	r = _mm512_fnmadd_pd(kf, _mm512_set1_pd(0x1.abc9e3b39803fp-60), r);
	__m512i ki = _mm512_sub_epi64(_mm512_castpd_si512(kd), _mm512_castpd_si512(magic));
	__m512d t = _mm512_permutex2var_pd(_mm512_load_pd(rx_exp2tab), ki, _mm512_load_pd(rx_exp2tab + 8));
	__m512i e = _mm512_slli_epi64(_mm512_add_epi64(_mm512_srai_epi64(ki, 4), _mm512_set1_epi64(1023)), 52);
	__m512d p = _mm512_fmadd_pd(r, _mm512_set1_pd(1.0 / 720), _mm512_set1_pd(1.0 / 120));
	p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0 / 24));
	p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0 / 6));
	p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(0.5));
	p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0));
	*q = _mm512_mul_pd(p, r);
	return _mm512_mul_pd(t, _mm512_castsi512_pd(e));
}

/* rx_near8: the lanes of t (of either sign, a float32 normal once rounded)
 * that lie within band float64 ULPs (band < 2^28) of a float32 rounding
 * midpoint: the low 29 bits of t, which the rounding drops, within band of
 * 2^28. */
RX_T512F static inline __mmask8 rx_near8(__m512d t, int64_t band)
{
	__m512i low = _mm512_and_si512(_mm512_castpd_si512(t), _mm512_set1_epi64(0x1fffffff));
	low = _mm512_add_epi64(low, _mm512_set1_epi64(band - 0x10000000));
	return _mm512_cmplt_epu64_mask(low, _mm512_set1_epi64(2 * band));
}

/* Tanh's three pieces, P and Q lowest degree first (scripts/fit_tanh.py
 * with the arguments shown), and their Ziv bands in float64 ULPs. */
static const double rx_tanhP1[3] = { /* 2 3 1 */
	0x1.4b931113af435p+13, 0x1.40f92bfa8fd18p+10, 0x1.539b47e059355p+4};
static const double rx_tanhQ1[4] = {
	0x1.4b931113afa11p+13, 0x1.2d4b010b8a22ep+12, 0x1.aace9e8051378p+7, 0x1.0000000000000p+0};
static const double rx_tanhP2[5] = { /* 4 5 6 */
	0x1.c2fd1916be401p+29, 0x1.f607d883b4594p+26, 0x1.e21306a1cee0cp+21, 0x1.057fe7b6b2039p+15,
	0x1.efb4143bd5679p+5};
static const double rx_tanhQ2[6] = {
	0x1.c2fd1916c93f1p+29, 0x1.aa2ab18446a64p+28, 0x1.98ee313ccad10p+24,
	0x1.a0fbd6f2ab636p+18, 0x1.c71d73f09e2ecp+10, 0x1.0000000000000p+0};
static const double rx_tanhP3[6] = { /* 5 5 9.03125 */
	0x1.437a068d9d98cp+28, 0x1.6cd9d04f77184p+25, 0x1.6e77f70e1333ep+20,
	0x1.bff1055cf9981p+13, 0x1.2d761e457b2f4p+5, 0x1.97d6bebcd5e02p-7};
static const double rx_tanhQ3[6] = {
	0x1.437a068dd1116p+28, 0x1.32dd2318aab36p+27, 0x1.2e3f9e99bc7b8p+23,
	0x1.4bb97273fbd26p+17, 0x1.b961bf5ff1025p+9, 0x1.0000000000000p+0};
#define RX_TANH_BAND1 0x1000
#define RX_TANH_BAND2 0x10000
#define RX_TANH_BAND3 0x80000

/* rx_horner8 is c[0] + c[1] z + ... + c[n-1] z^(n-1), n >= 2, by Horner's
 * scheme (FMA); n is a constant where it is inlined. */
RX_T512F static inline __m512d rx_horner8(const double *c, int n, __m512d z)
{
	__m512d r = _mm512_fmadd_pd(_mm512_set1_pd(c[n - 1]), z, _mm512_set1_pd(c[n - 2]));
	for (int i = n - 3; i >= 0; i--)
		r = _mm512_fmadd_pd(r, z, _mm512_set1_pd(c[i]));
	return r;
}

/* rx_horner8m is rx_horner8 for a monic polynomial (c[n-1] = 1): its first
 * step is an addition, which runs on the FP adders rather than the FMA
 * units that the rest of the evaluation keeps busy. */
RX_T512F static inline __m512d rx_horner8m(const double *c, int n, __m512d z)
{
	__m512d r = _mm512_add_pd(z, _mm512_set1_pd(c[n - 2]));
	for (int i = n - 3; i >= 0; i--)
		r = _mm512_fmadd_pd(r, z, _mm512_set1_pd(c[i]));
	return r;
}

/* rx_tanhq8 is the short evaluation x P(x^2) / Q(x^2) of tanh(x) by piece
 * k (1, 2 or 3) for |x| <= 1, 6 or 9.03125 (see the comment above). */
RX_T512F static inline __m512d rx_tanhq8(__m512d x, int k)
{
	__m512d z = _mm512_mul_pd(x, x), p, q;
	if (k == 1)
		p = rx_horner8(rx_tanhP1, 3, z), q = rx_horner8m(rx_tanhQ1, 4, z);
	else if (k == 2)
		p = rx_horner8(rx_tanhP2, 5, z), q = rx_horner8m(rx_tanhQ2, 6, z);
	else
		p = rx_horner8(rx_tanhP3, 6, z), q = rx_horner8m(rx_tanhQ3, 6, z);
	return _mm512_div_pd(_mm512_mul_pd(x, p), q);
}

/* rx_near8p is rx_near8 for a power-of-two band, in two operations: the
 * low 29 bits of t plus band - 2^28, modulo 2^29, below 2 band. */
RX_T512F static inline __mmask8 rx_near8p(__m512d t, int64_t band)
{
	__m512i low = _mm512_add_epi64(_mm512_castpd_si512(t), _mm512_set1_epi64(band - 0x10000000));
	return _mm512_testn_epi64_mask(low, _mm512_set1_epi64(0x1fffffff & ~(2 * band - 1)));
}

/* tanh(x) by piece k, for lanes whose |x| is within the piece's bound (NaN
 * aside): piece 3 clamps x to [-9.03125, 9.03125] (vrangepd: the smaller
 * magnitude, the sign of x): beyond 9.0109 tanh rounds to ±1, and the value
 * at ±9.03125 lies 2^23 ULPs from the midpoint below 1, so it rounds to ±1
 * without a fallback. Small |x| needs no case of its own: for |x| < 2^-12,
 * where the correctly rounded tanh(x) is x itself (tanh(x) = x (1 - x^2/3
 * + ...) lies within x^2/3 < 2^-25.5 relative of x, less than half a
 * float32 ULP), the short value lies within the piece's error (relative,
 * 2^-34 or less) of the float32 x, so it rounds to x, subnormals and
 * signed zeros included, and its low bits are nowhere near a midpoint.
 * Piece 3 sends NaN to SLEEF, whose NaN (all ones) the short path does not
 * make; pieces 1 and 2 never see one (rx_tanh_piece). */
RX_T512F static inline __m512d rx_tanh8(__m512d x, int k)
{
	__m512d xc = k == 3 ? _mm512_range_pd(x, _mm512_set1_pd(9.03125), 2) : x;
	__mmask8 nan = k == 3 ? _mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q) : 0;
	__m512d t = rx_tanhq8(xc, k);
	__mmask8 hard = (__mmask8)(nan | rx_near8p(t, k == 1 ? RX_TANH_BAND1 : k == 2 ? RX_TANH_BAND2 : RX_TANH_BAND3));
	if (__builtin_expect(hard != 0, 0)) {
		RX_ZIV_COUNT(0, hard);
		t = _mm512_mask_blend_pd(hard, t, Sleef_tanhd8_u35avx512f(x));
	}
	return t;
}

/* RX_TANH_BLOCK is the number of elements that rx_tanh_avx512 gives one
 * piece. */
#define RX_TANH_BLOCK 64

/* rx_tanh_piece is the piece for n <= RX_TANH_BLOCK elements at x: the
 * first whose bound holds every |x[i]|, compared as bits (|x| as an
 * unsigned integer orders as |x| does, and NaNs above +Inf), so a block
 * with a NaN takes piece 3, the only one that looks for NaN. A whole block
 * takes four unmasked loads and a tree of maxima: 5-10% less time per
 * Tanh on the scoring data than the general loop (Zen 4). (vrangeps, the
 * greater magnitude in one operation, loses NaNs: TestZivFallbacks.) */
_Static_assert(RX_TANH_BLOCK == 64, "rx_tanh_piece reads a whole block as 4 vectors");
RX_T512F static inline int rx_tanh_piece(const float *x, int64_t n)
{
	__m512i m = _mm512_setzero_si512(), c = _mm512_set1_epi32(0x7fffffff);
	if (n == RX_TANH_BLOCK) {
		__m512i a = _mm512_max_epu32(_mm512_and_si512(_mm512_loadu_si512(x), c), _mm512_and_si512(_mm512_loadu_si512(x + 16), c));
		__m512i b = _mm512_max_epu32(_mm512_and_si512(_mm512_loadu_si512(x + 32), c), _mm512_and_si512(_mm512_loadu_si512(x + 48), c));
		m = _mm512_max_epu32(a, b);
	} else
		for (int64_t j = 0; j < n; j += 16) {
			__mmask16 k = n - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - j)) - 1);
			__m512i v = _mm512_maskz_loadu_epi32(k, x + j);
			m = _mm512_max_epu32(m, _mm512_and_si512(v, c));
		}
	if (_mm512_cmple_epu32_mask(m, _mm512_set1_epi32(0x3f800000)) == 0xffff) /* 1.0f */
		return 1;
	if (_mm512_cmple_epu32_mask(m, _mm512_set1_epi32(0x40c00000)) == 0xffff) /* 6.0f */
		return 2;
	return 3;
}

/* rx_tanh_block is o[j] = tanh(x[j]) for j < RX_TANH_BLOCK by piece k, 1 or
 * 2 (no NaN, no clamp), with one Ziv branch for the block instead of one
 * per vector: it stores the short values, ORs the vectors' rx_near8p masks
 * and, if any lane of the block is near a midpoint, computes the block
 * again through rx_tanh8 (the same short values, SLEEF's where it sends a
 * lane there) from a copy of x, which o may overwrite. The branch per
 * vector costs more than the rare second pass: 3-4% less time per Tanh on
 * the scoring data, where pieces 1 and 2 send a block to the second pass
 * with probability about 64 * 2 band / 2^29, 0.1% and 1.6%; not for piece
 * 3, whose 12% would outweigh it. */
RX_T512F static inline __attribute__((always_inline)) void rx_tanh_block(float *o, const float *x, int k)
{
	float s[RX_TANH_BLOCK] __attribute__((aligned(32)));
	__mmask8 near = 0;
	for (int j = 0; j < RX_TANH_BLOCK; j += 8) {
		__m256 v = _mm256_loadu_ps(x + j);
		_mm256_store_ps(s + j, v);
		__m512d t = rx_tanhq8(_mm512_cvtps_pd(v), k);
		near |= rx_near8p(t, k == 1 ? RX_TANH_BAND1 : RX_TANH_BAND2);
		rx_st8d(o + j, t);
	}
	if (__builtin_expect(near != 0, 0))
		for (int j = 0; j < RX_TANH_BLOCK; j += 8)
			rx_st8d(o + j, rx_tanh8(rx_ld8d(s + j), k));
}

/* RX_TANH_RUN8(K), in rx_tanh_avx512, is o[i + j] = tanh(x[i + j]) for
 * j < m by piece K; the tail goes through a zero-padded 8-element buffer,
 * as in RX_MAP_VEC. */
#define RX_TANH_RUN8(K)                                                            \
	do {                                                                       \
		int64_t j_ = 0;                                                    \
		for (; j_ + 8 <= m; j_ += 8)                                       \
			rx_st8d(o + i + j_, rx_tanh8(rx_ld8d(x + i + j_), K));     \
		if (j_ < m) {                                                      \
			float t_[8] = {0};                                         \
			memcpy(t_, x + i + j_, (size_t)(m - j_) * sizeof(float));  \
			rx_st8d(t_, rx_tanh8(rx_ld8d(t_), K));                     \
			memcpy(o + i + j_, t_, (size_t)(m - j_) * sizeof(float));  \
		}                                                                  \
	} while (0)

/* RX_TANH_BLOCKS(K, BLOCK), in rx_tanh_avx512, runs BLOCK (the whole
 * block at i by piece K) for each block from i on while the next one
 * takes piece K too, leaving k the next block's piece: a run of blocks of
 * one piece stays in one loop, with its constants in registers (3% faster
 * than a dispatch per block on the scoring data, Zen 4). */
#define RX_TANH_BLOCKS(K, BLOCK)                                                  \
	do {                                                                      \
		BLOCK;                                                            \
		i += RX_TANH_BLOCK;                                               \
	} while (i < nb && (k = rx_tanh_piece(x + i, RX_TANH_BLOCK)) == K)

/* rx_tanh_avx512 takes RX_TANH_BLOCK elements at a time through the
 * cheapest piece that covers them all (rx_tanh_piece): whole blocks by
 * rx_tanh_block (pieces 1 and 2) or a loop of a constant count (piece 3),
 * then the last, partial block by RX_TANH_RUN8. */
RX_T512F static void rx_tanh_avx512(float *o, const float *x, int64_t n)
{
	int64_t i = 0, nb = n - n % RX_TANH_BLOCK;
	int k = nb ? rx_tanh_piece(x, RX_TANH_BLOCK) : 0;
	while (i < nb) {
		switch (k) {
		case 1:
			RX_TANH_BLOCKS(1, rx_tanh_block(o + i, x + i, 1));
			break;
		case 2:
			RX_TANH_BLOCKS(2, rx_tanh_block(o + i, x + i, 2));
			break;
		default:
			RX_TANH_BLOCKS(3, for (int j = 0; j < RX_TANH_BLOCK; j += 8)
						  rx_st8d(o + i + j, rx_tanh8(rx_ld8d(x + i + j), 3)));
		}
	}
	if (i < n) {
		int64_t m = n - i;
		switch (rx_tanh_piece(x + i, m)) {
		case 1:
			RX_TANH_RUN8(1);
			break;
		case 2:
			RX_TANH_RUN8(2);
			break;
		default:
			RX_TANH_RUN8(3);
		}
	}
}

/* exp(x) = S + S q; results that are not float32 normals go to SLEEF. */
RX_T512F static inline __m512d rx_exp8(__m512d x)
{
	__mmask8 ok = _mm512_cmp_pd_mask(x, _mm512_set1_pd(-87.33), _CMP_GT_OQ) &
		      _mm512_cmp_pd_mask(x, _mm512_set1_pd(88.72), _CMP_LT_OQ);
	__m512d q, s = rx_expq8(_mm512_maskz_mov_pd(ok, x), &q);
	__m512d t = _mm512_fmadd_pd(s, q, s);
	__mmask8 hard = (__mmask8)(~ok | rx_near8(t, 0x2000));
	if (__builtin_expect(hard != 0, 0)) {
		RX_ZIV_COUNT(1, hard);
		t = _mm512_mask_blend_pd(hard, t, Sleef_expd8_u10avx512f(x));
	}
	return t;
}

/* sigmoid(x) = 1 / (1 + (S + S q)) with S (1 + q) = exp(-x); x <= -87
 * (results near the float32 subnormals), x >= 700 and NaN go to SLEEF. */
RX_T512F static inline __m512d rx_sigmoid8f(__m512d x)
{
	__mmask8 ok = _mm512_cmp_pd_mask(x, _mm512_set1_pd(-87.0), _CMP_GT_OQ) &
		      _mm512_cmp_pd_mask(x, _mm512_set1_pd(700.0), _CMP_LT_OQ);
	__m512d q, s = rx_expq8(_mm512_maskz_mov_pd(ok, _mm512_sub_pd(_mm512_setzero_pd(), x)), &q);
	__m512d one = _mm512_set1_pd(1.0);
	__m512d t = _mm512_div_pd(one, _mm512_add_pd(one, _mm512_fmadd_pd(s, q, s)));
	__mmask8 hard = (__mmask8)(~ok | rx_near8(t, 0x2000));
	if (__builtin_expect(hard != 0, 0)) {
		RX_ZIV_COUNT(2, hard);
		t = _mm512_mask_blend_pd(hard, t, rx_sigmoid8(x));
	}
	return t;
}

RX_MAP_VEC(rx_exp_avx512, RX_T512F, 8, __m512d, rx_ld8d, rx_st8d, rx_exp8)
RX_MAP_VEC(rx_log_avx512, RX_T512, 8, __m512d, rx_ld8d, rx_st8d, Sleef_logd8_u10avx512f)
RX_MAP_VEC(rx_sigmoid_avx512, RX_T512F, 8, __m512d, rx_ld8d, rx_st8d, rx_sigmoid8f)

RX_T256 static inline __m256d rx_ld4d(const float *p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
RX_T256 static inline void rx_st4d(float *p, __m256d v) { _mm_storeu_ps(p, _mm256_cvtpd_ps(v)); }
RX_T256 static inline __m256d rx_sigmoid4(__m256d v)
{
	__m256d one = _mm256_set1_pd(1.0);
	return _mm256_div_pd(one, _mm256_add_pd(one, Sleef_expd4_u10avx2(_mm256_sub_pd(_mm256_setzero_pd(), v))));
}
RX_MAP_VEC(rx_tanh_avx2, RX_T256, 4, __m256d, rx_ld4d, rx_st4d, Sleef_tanhd4_u35avx2)
RX_MAP_VEC(rx_exp_avx2, RX_T256, 4, __m256d, rx_ld4d, rx_st4d, Sleef_expd4_u10avx2)
RX_MAP_VEC(rx_log_avx2, RX_T256, 4, __m256d, rx_ld4d, rx_st4d, Sleef_logd4_u10avx2)
RX_MAP_VEC(rx_sigmoid_avx2, RX_T256, 4, __m256d, rx_ld4d, rx_st4d, rx_sigmoid4)

static inline __m128d rx_ld2d(const float *p) { return _mm_cvtps_pd(_mm_castpd_ps(_mm_load_sd((const double *)(const void *)p))); }
static inline void rx_st2d(float *p, __m128d v) { _mm_store_sd((double *)(void *)p, _mm_castps_pd(_mm_cvtpd_ps(v))); }
static inline __m128d rx_sigmoid2(__m128d v)
{
	__m128d one = _mm_set1_pd(1.0);
	return _mm_div_pd(one, _mm_add_pd(one, Sleef_expd2_u10sse2(_mm_sub_pd(_mm_setzero_pd(), v))));
}
RX_MAP_VEC(rx_tanh_sse2, , 2, __m128d, rx_ld2d, rx_st2d, Sleef_tanhd2_u35sse2)
RX_MAP_VEC(rx_exp_sse2, , 2, __m128d, rx_ld2d, rx_st2d, Sleef_expd2_u10sse2)
RX_MAP_VEC(rx_log_sse2, , 2, __m128d, rx_ld2d, rx_st2d, Sleef_logd2_u10sse2)
RX_MAP_VEC(rx_sigmoid_sse2, , 2, __m128d, rx_ld2d, rx_st2d, rx_sigmoid2)
#endif

/* ---- MatMul, per ISA ----------------------------------------------------
 * o[M,N] = a[M,K] x b[K,N], optionally plus a bias row: o[i,j] =
 * sum[i,j] + bias[j]. A panel of MR rows by NV vectors of W columns
 * keeps its MR*NV accumulators in registers over the whole K; each element
 * starts from 0 and adds a[i,k]*b[k,j] (the product rounded, then the sum)
 * for k = 0..K-1 in order, so the blocking, the vector width and the ISA
 * never change a bit of the result. With a bias, the rounded sum is then
 * added to bias[j] in float32 as the panel is stored: the bits of MatMul
 * followed by Add (sum first, bias second); without one nothing is added
 * (adding 0 would turn a -0 sum into +0). b's rows are read once per
 * panel: for K, N <= 64 (16 KB) b stays in L1 while the rows of a stream
 * through. */
#define RX_MM_PANEL(VT, W, MR, NV)                                                       \
	do {                                                                             \
		VT acc[MR][NV];                                                          \
		_Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                     \
		_Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                     \
			acc[r][v] = (VT){0};                                             \
		for (int64_t k = 0; k < K; k++) {                                        \
			VT bv[NV];                                                       \
			_Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)             \
				bv[v] = RX_LOAD(VT, b + k * N + j + v * W);              \
			_Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {           \
				VT av = RX_SPLAT(VT, a[(i + r) * K + k]);                \
				_Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)     \
					acc[r][v] = acc[r][v] + av * bv[v];              \
			}                                                                \
		}                                                                        \
		if (bias) {                                                              \
			_Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {           \
				VT cv = RX_LOAD(VT, bias + j + v * W);                   \
				_Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)     \
					acc[r][v] = acc[r][v] + cv;                      \
			}                                                                \
		}                                                                        \
		_Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                     \
		_Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                     \
			RX_STORE(o + (i + r) * N + j + v * W, acc[r][v]);                \
	} while (0)

/* RX_MM_COLS runs panels over every row for the columns [j, j+NV*W) while
 * they fit, MR rows at a time and then one. */
#define RX_MM_COLS(VT, W, MR, NV)                                        \
	for (; j + (NV) * (W) <= N; j += (NV) * (W)) {                   \
		int64_t i = 0;                                           \
		for (; i + (MR) <= M; i += (MR))                         \
			RX_MM_PANEL(VT, W, MR, NV);                      \
		for (; i < M; i++)                                       \
			RX_MM_PANEL(VT, W, 1, NV);                       \
	}

/* RX_MM_COLS1 runs one-vector panels over every row for the columns [j,
 * j+W) while they fit: 8 rows at a time, then 4, then one. */
#define RX_MM_COLS1(VT, W)                                               \
	for (; j + (W) <= N; j += (W)) {                                 \
		int64_t i = 0;                                           \
		for (; i + 8 <= M; i += 8)                               \
			RX_MM_PANEL(VT, W, 8, 1);                        \
		for (; i + 4 <= M; i += 4)                               \
			RX_MM_PANEL(VT, W, 4, 1);                        \
		for (; i < M; i++)                                       \
			RX_MM_PANEL(VT, W, 1, 1);                        \
	}

/* rx_mm_rest computes the columns from j on, one element at a time, in the
 * same order. */
static void rx_mm_rest(float *o, const float *a, const float *b, const float *bias, int64_t M, int64_t K,
		       int64_t N, int64_t j0)
{
	if (j0 >= N)
		return;
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = j0; j < N; j++) {
			float acc = 0.0f;
			for (int64_t k = 0; k < K; k++)
				acc = acc + a[i * K + k] * b[k * N + j];
			o[i * N + j] = bias ? acc + bias[j] : acc;
		}
}

/* A MatMul kernel: o = a x b (+ bias when bias is not NULL), M, N > 0. */
typedef void (*rx_mmb_fn)(float *o, const float *a, const float *b, const float *bias, int64_t M, int64_t K,
			  int64_t N);

/* RX_MM_KERNEL defines a MatMul kernel NAME whose widest vector is VT (W
 * lanes): panels two vectors wide, then one, then 8 and 4 lanes, then
 * plain C for the last columns. */
#define RX_MM_KERNEL(NAME, TGT, VT, W)                                                         \
	TGT static void NAME(float *o, const float *a, const float *b, const float *bias,      \
			     int64_t M, int64_t K, int64_t N)                                  \
	{                                                                                      \
		int64_t j = 0;                                                                 \
		RX_MM_COLS(VT, W, 4, 2)                                                        \
		RX_MM_COLS(VT, W, 8, 1)                                                        \
		RX_MM_COLS(rx_v8f, 8, 8, 1)                                                    \
		RX_MM_COLS(rx_v4f, 4, 8, 1)                                                    \
		rx_mm_rest(o, a, b, bias, M, K, N, j);                                         \
	}

RX_MM_KERNEL(rx_mm_c_b, , rx_v4f, 4)
#ifdef RX_X86
RX_MM_KERNEL(rx_mm_avx2_b, __attribute__((target("avx2"))), rx_v8f, 8)
RX_MM_KERNEL(rx_mm_avx512f_b, __attribute__((target("avx512f,avx512dq"))), rx_v16f, 16)

/* rx_mm_avx512vl_b is the AVX-512 kernel on CPUs with AVX512VL (every one
 * with AVX512DQ so far): one-vector panels of 16 columns by 8 rows, whose
 * splat of a[i,k] folds into the multiply as an embedded broadcast (on
 * Zen 4, 8x16 panels run at 53 MACs/ns where the 4x32 panels of
 * RX_MM_KERNEL, with a separate broadcast, reach 39); then 8 and 4
 * columns, with the same folding on ymm and xmm (VL). Below 8 rows, 32
 * columns at a time first: two independent accumulators per row, where
 * the latency of the adds bounds a single one. */
__attribute__((target("avx512f,avx512dq,avx512vl"))) static void
rx_mm_avx512vl_b(float *o, const float *a, const float *b, const float *bias, int64_t M, int64_t K, int64_t N)
{
	int64_t j = 0;
	if (M < 8)
		RX_MM_COLS(rx_v16f, 16, 1, 2)
	RX_MM_COLS1(rx_v16f, 16)
	RX_MM_COLS1(rx_v8f, 8)
	RX_MM_COLS1(rx_v4f, 4)
	rx_mm_rest(o, a, b, bias, M, K, N, j);
}

#endif

/* The row functions of the binary kernels (RX_ROWS, below), per ISA. */
typedef void (*rx_run_fn)(float *o, const float *x, int64_t sxr, int64_t sx, const float *y,
			  int64_t syr, int64_t sy, int64_t rows, int64_t m);
#define RX_RUN_DECL(NAME) static void NAME(float *o, const float *x, int64_t sxr, int64_t sx, const float *y, \
					   int64_t syr, int64_t sy, int64_t rows, int64_t m);
RX_RUN_DECL(rx_run_add_f) RX_RUN_DECL(rx_run_sub_f) RX_RUN_DECL(rx_run_mul_f) RX_RUN_DECL(rx_run_div_f)
#ifdef RX_X86
RX_RUN_DECL(rx_run_add_avx2) RX_RUN_DECL(rx_run_sub_avx2) RX_RUN_DECL(rx_run_mul_avx2) RX_RUN_DECL(rx_run_div_avx2)
RX_RUN_DECL(rx_run_add_avx512) RX_RUN_DECL(rx_run_sub_avx512) RX_RUN_DECL(rx_run_mul_avx512) RX_RUN_DECL(rx_run_div_avx512)
#endif

/* One set of kernels: those of one ISA. */
typedef struct rx_kset {
	int isa;
	rx_map_fn tanh, exp, log, sigmoid;
	rx_mmb_fn mm; /* with an optional bias row */
	rx_run_fn add, sub, mul, div;
} rx_kset;

/* The kernels of every ISA this process may use, rx_kt[0] (plain C) to
 * rx_kt[rx_kmax] (the widest), filled once when the library is loaded
 * (rx_isa_init) and read-only afterwards. */
static rx_kset rx_kt[4];
static int rx_kmax;

/* rx_kcur is the running call's set (rx_kernels_select, called by
 * rx_open on the call's thread; a call runs on one thread), NULL on a
 * thread that never opened a call. rx_k is the set the kernels use: the
 * call's, else the widest. */
static _Thread_local const rx_kset *rx_kcur;
#define rx_k (*(rx_kcur ? rx_kcur : &rx_kt[rx_kmax]))

/* rx_kset_for fills the kernels of ISA isa (0 plain C, 1 SSE2, 2 AVX2, 3
 * AVX-512; the CPU supports it). */
static void rx_kset_for(rx_kset *k, int isa)
{
	*k = (rx_kset){isa, rx_tanh_c, rx_exp_c, rx_log_c, rx_sigmoid_c, rx_mm_c_b,
		       rx_run_add_f, rx_run_sub_f, rx_run_mul_f, rx_run_div_f};
#ifdef RX_X86
	if (isa >= 2) {
		k->mm = rx_mm_avx2_b;
		k->add = rx_run_add_avx2, k->sub = rx_run_sub_avx2;
		k->mul = rx_run_mul_avx2, k->div = rx_run_div_avx2;
	}
	if (isa >= 3) {
		/* The VL kernel where the CPU has AVX512VL: the same bits. */
		k->mm = __builtin_cpu_supports("avx512vl") ? rx_mm_avx512vl_b : rx_mm_avx512f_b;
		k->add = rx_run_add_avx512, k->sub = rx_run_sub_avx512;
		k->mul = rx_run_mul_avx512, k->div = rx_run_div_avx512;
	}
#ifdef RX_SLEEF
	if (isa == 1) {
		k->tanh = rx_tanh_sse2, k->exp = rx_exp_sse2;
		k->log = rx_log_sse2, k->sigmoid = rx_sigmoid_sse2;
	} else if (isa == 2) {
		k->tanh = rx_tanh_avx2, k->exp = rx_exp_avx2;
		k->log = rx_log_avx2, k->sigmoid = rx_sigmoid_avx2;
	} else if (isa == 3) {
		k->tanh = rx_tanh_avx512, k->exp = rx_exp_avx512;
		k->log = rx_log_avx512, k->sigmoid = rx_sigmoid_avx512;
	}
#endif
#endif
}

/* rx_isa_init fills the kernels once per process, when the library is
 * loaded: those of every ISA up to the widest that the CPU supports and
 * RX_ISA_CAP allows, which calls use unless they ask for less. */
__attribute__((constructor)) static void rx_isa_init(void)
{
	int isa = 0;
#ifdef RX_X86
	__builtin_cpu_init();
	isa = 1;
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		isa = 2;
	if (isa == 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"))
		isa = 3;
#endif
	if (isa > RX_ISA_CAP)
		isa = RX_ISA_CAP;
	rx_kmax = isa;
	for (int i = 0; i <= isa; i++)
		rx_kset_for(&rx_kt[i], i);
}

/* rx_kernels_select chooses the kernels of the call that st describes, on
 * the call's thread (rx_open calls it): the ISA st->isa_cap asks for (k+1
 * for ISA k; 0: the widest), at most the widest the process may use. It
 * records the ISA the kernels run at in st->isa (plus one), so that the
 * caller can see that the one it asked for is in force. */
void rx_kernels_select(rx_status *st);
void rx_kernels_select(rx_status *st)
{
	int isa = rx_kmax;
	if (st->isa_cap > 0 && st->isa_cap - 1 < isa)
		isa = (int)(st->isa_cap - 1);
	rx_kcur = &rx_kt[isa];
	st->isa = rx_kcur->isa + 1;
}

/* rx_native_isa names the widest ISA the kernels of this process use
 * ("avx512", "avx2", "sse2" or "c"; a call may ask for less) and whether SLEEF computes the transcendentals.
 * Not part of rx_runtime.h: tests and BuildInfo look it up with dlsym. */
const char *rx_native_isa(void);
const char *rx_native_isa(void)
{
	static const char *const names[2][4] = {{"c", "sse2", "avx2", "avx512"},
						{"c", "sse2+sleef", "avx2+sleef", "avx512+sleef"}};
#ifdef RX_SLEEF
	return names[1][rx_kmax];
#else
	return names[0][rx_kmax];
#endif
}
/* rx_bcast computes NumPy broadcasting of a and b: the output dims (right
 * aligned, padded to RX_MAX_RANK with leading 1s) and each operand's element
 * strides over that padded shape (0 where the operand is broadcast). */
static int rx_bcast(rx_ctx *c, const rx_val *a, const rx_val *b, int32_t *rank,
		    int64_t od[RX_MAX_RANK], int64_t sa[RX_MAX_RANK], int64_t sb[RX_MAX_RANK])
{
	int32_t r = a->rank > b->rank ? a->rank : b->rank;
	int64_t da[RX_MAX_RANK], db[RX_MAX_RANK];
	for (int i = 0; i < RX_MAX_RANK; i++) {
		int ia = i - (RX_MAX_RANK - a->rank), ib = i - (RX_MAX_RANK - b->rank);
		da[i] = ia >= 0 ? a->dims[ia] : 1;
		db[i] = ib >= 0 ? b->dims[ib] : 1;
		if (da[i] != db[i] && da[i] != 1 && db[i] != 1)
			return rx_fail(c, RX_E_INTERNAL, RX_I_SHAPE, a - c->v, i, db[i]);
		od[i] = da[i] == 1 ? db[i] : da[i];
	}
	int64_t ka = 1, kb = 1;
	for (int i = RX_MAX_RANK - 1; i >= 0; i--) {
		sa[i] = da[i] == 1 ? 0 : ka;
		sb[i] = db[i] == 1 ? 0 : kb;
		ka *= da[i];
		kb *= db[i];
	}
	*rank = r;
	return RX_OK;
}


/* ---- elementwise -------------------------------------------------------- */

/* RX_RUN_LOOP advances i over the elements of NAME's run W at a time on
 * vectors of type VT (see RX_RUN_V). */
#define RX_RUN_LOOP(VEXPR, VT, W)                                                   \
	if (VEXPR##_ok && n - i >= W) {                                             \
		VT a = RX_SPLAT(VT, x[0]), b = RX_SPLAT(VT, y[0]);                  \
		if (sx && sy) {                                                     \
			for (; i + W <= n; i += W) {                                \
				a = RX_LOAD(VT, x + i);                             \
				b = RX_LOAD(VT, y + i);                             \
				RX_STORE(o + i, VEXPR(a, b));                       \
			}                                                           \
		} else if (sx) {                                                    \
			for (; i + W <= n; i += W) {                                \
				a = RX_LOAD(VT, x + i);                             \
				RX_STORE(o + i, VEXPR(a, b));                       \
			}                                                           \
		} else if (sy) {                                                    \
			for (; i + W <= n; i += W) {                                \
				b = RX_LOAD(VT, y + i);                             \
				RX_STORE(o + i, VEXPR(a, b));                       \
			}                                                           \
		}                                                                   \
	}

/* RX_RUN_V defines NAME(o, x, sx, y, sy, n): o[i] = EXPR(a = x[i*sx], b =
 * y[i*sy]) for i < n, with sx, sy in {0, 1} (0: a broadcast scalar). VEXPR
 * is the same on vectors a, b (elementwise, the same rounding), or
 * RX_VNONE for a kernel without one: W lanes at a time (VT), then 8 and 4
 * while they fit (when W is wider), then one element at a time; TGT is the
 * function's target attribute. o may be x or y. */
#define RX_RUN_V(NAME, EXPR, VEXPR, VT, W, TGT)                                             \
	TGT static inline __attribute__((always_inline)) void NAME(float *o, const float *x, int64_t sx, const float *y, int64_t sy, int64_t n) \
	{                                                                                   \
		int64_t i = 0;                                                              \
		RX_RUN_LOOP(VEXPR, VT, W)                                                   \
		if (W > 8)                                                                  \
			RX_RUN_LOOP(VEXPR, rx_v8f, 8)                                       \
		if (W > 4)                                                                  \
			RX_RUN_LOOP(VEXPR, rx_v4f, 4)                                       \
		for (; i < n; i++) {                                                        \
			float a = x[i * sx], b = y[i * sy];                                 \
			o[i] = (EXPR);                                                      \
		}                                                                           \
	}
/* RX_RUN: on 4 lanes (SSE2, x86-64's baseline, or the target's 128-bit
 * vectors). */
#define RX_RUN(NAME, EXPR, VEXPR) RX_RUN_V(NAME, EXPR, VEXPR, rx_v4f, 4, )

#define RX_VADD(a, b) ((a) + (b))
#define RX_VSUB(a, b) ((a) - (b))
#define RX_VMUL(a, b) ((a) * (b))
#define RX_VDIV(a, b) ((a) / (b))
#define RX_VNONE(a, b) ((void)(b), (a))
enum { RX_VADD_ok = 1, RX_VSUB_ok = 1, RX_VMUL_ok = 1, RX_VDIV_ok = 1, RX_VNONE_ok = 0 };

RX_RUN(rx_run_add, a + b, RX_VADD)
RX_RUN(rx_run_sub, a - b, RX_VSUB)
RX_RUN(rx_run_mul, a * b, RX_VMUL)
RX_RUN(rx_run_div, a / b, RX_VDIV)
RX_RUN(rx_run_maximum, rx_maxf(a, b), RX_VNONE)
RX_RUN(rx_run_minimum, rx_minf(a, b), RX_VNONE)

/* RX_ROWS defines the rx_run_fn NAME over rows of a run function RUN:
 * rows runs of m elements, o contiguous, x and y advancing by sxr and syr
 * elements per row (a broadcast row: 0). */
#define RX_ROWS(NAME, RUN, TGT)                                                                   \
	TGT static void NAME(float *o, const float *x, int64_t sxr, int64_t sx, const float *y,   \
			     int64_t syr, int64_t sy, int64_t rows, int64_t m)                    \
	{                                                                                         \
		for (int64_t r = 0; r < rows; r++)                                                \
			RUN(o + r * m, x + r * sxr, sx, y + r * syr, sy, m);                      \
	}

/* The binary kernels' row functions: on 4 lanes, and on 16 (AVX-512) and
 * 8 (AVX2): the same IEEE float32 operation on each element, so the same
 * bits. The broadcasting kernels call them through rx_k, once per block
 * of rows. */
RX_ROWS(rx_run_add_f, rx_run_add, )
RX_ROWS(rx_run_sub_f, rx_run_sub, )
RX_ROWS(rx_run_mul_f, rx_run_mul, )
RX_ROWS(rx_run_div_f, rx_run_div, )
RX_ROWS(rx_run_maximum_f, rx_run_maximum, )
RX_ROWS(rx_run_minimum_f, rx_run_minimum, )
#ifdef RX_X86
#define RX_RUN_WIDE(NAME, EXPR, VEXPR)                                                          \
	RX_RUN_V(NAME##_avx512_i, EXPR, VEXPR, rx_v16f, 16, __attribute__((target("avx512f"))))  \
	RX_RUN_V(NAME##_avx2_i, EXPR, VEXPR, rx_v8f, 8, __attribute__((target("avx2"))))         \
	RX_ROWS(NAME##_avx512, NAME##_avx512_i, __attribute__((target("avx512f"))))              \
	RX_ROWS(NAME##_avx2, NAME##_avx2_i, __attribute__((target("avx2"))))
RX_RUN_WIDE(rx_run_add, a + b, RX_VADD)
RX_RUN_WIDE(rx_run_sub, a - b, RX_VSUB)
RX_RUN_WIDE(rx_run_mul, a * b, RX_VMUL)
RX_RUN_WIDE(rx_run_div, a / b, RX_VDIV)
#endif

/* rx_suffix reports whether b's dims are a's last b->rank dims (b may be a
 * scalar): then a op b has a's shape, and b repeats every b->len elements
 * of a. The common broadcasts (equal shapes, a row vector over a batch, a
 * scalar) take this path without rx_bcast's strides. */
static inline int rx_suffix(const rx_val *b, const rx_val *a)
{
	int32_t off = a->rank - b->rank;
	if (off < 0)
		return 0;
	for (int32_t i = 0; i < b->rank; i++)
		if (b->dims[i] != a->dims[off + i])
			return 0;
	return 1;
}

/* RX_BINARY defines a broadcasting float32 kernel from its run function.
 * The destination may be one of the operands: every output element reads
 * only its own index of a full-shape operand. When one operand's dims
 * are the other's last ones (rx_suffix) the output has the larger one's
 * shape and is rows of the smaller one's length (one run when the
 * smaller is a scalar or the same size); otherwise rx_bcast computes the
 * strides. Each element is the same IEEE operation either way. */
#define RX_BINARY(NAME, RUN)                                                           \
	RX_FN int NAME(rx_ctx *c, rx_val *d, rx_val *av, rx_val *bv)                   \
	{                                                                              \
		const rx_val *A = rx_operand(c, av), *B = rx_operand(c, bv);           \
		if (!A || !B)                                                          \
			return c->st->code;                                            \
		const float *x = A->data, *y = B->data;                                \
		int64_t na = A->len, nb = B->len;                                      \
		if (rx_suffix(B, A)) {                                                 \
			float *o = rx_out(c, d, RX_F32, A->rank, A->dims, 0);          \
			if (!o)                                                        \
				return c->st->code;                                    \
			if (na > 0) {                                                  \
				if (nb == na || nb == 1)                               \
					RUN(o, x, 0, 1, y, 0, nb == na, 1, na);        \
				else                                                   \
					RUN(o, x, nb, 1, y, 0, 1, na / nb, nb);        \
			}                                                              \
			return rx_result(c, d);                                        \
		}                                                                      \
		if (rx_suffix(A, B)) {                                                 \
			float *o = rx_out(c, d, RX_F32, B->rank, B->dims, 0);          \
			if (!o)                                                        \
				return c->st->code;                                    \
			if (nb > 0) {                                                  \
				if (na == nb || na == 1)                               \
					RUN(o, x, 0, na == nb, y, 0, 1, 1, nb);        \
				else                                                   \
					RUN(o, x, 0, 1, y, na, 1, nb / na, na);        \
			}                                                              \
			return rx_result(c, d);                                        \
		}                                                                      \
		int32_t r;                                                             \
		int64_t od[RX_MAX_RANK], sa[RX_MAX_RANK], sb[RX_MAX_RANK];             \
		if (rx_bcast(c, A, B, &r, od, sa, sb) != RX_OK)                        \
			return c->st->code;                                            \
		float *o = rx_out(c, d, RX_F32, r, od + (RX_MAX_RANK - r), 0);         \
		if (!o)                                                                \
			return c->st->code;                                            \
		int64_t n = d->len;                                                    \
		if (n == 0)                                                            \
			return rx_result(c, d);                                        \
		if ((na == n || na == 1) && (nb == n || nb == 1)) {                    \
			RUN(o, x, 0, na == n, y, 0, nb == n, 1, n);                    \
		} else {                                                               \
			int64_t k = 0, m = od[3];                                      \
			for (int64_t i0 = 0; i0 < od[0]; i0++)                         \
			for (int64_t i1 = 0; i1 < od[1]; i1++) {                       \
				const float *xa = x + i0 * sa[0] + i1 * sa[1];         \
				const float *yb = y + i0 * sb[0] + i1 * sb[1];         \
				RUN(o + k, xa, sa[2], sa[3], yb, sb[2], sb[3], od[2], m); \
				k += od[2] * m;                                        \
			}                                                              \
		}                                                                      \
		return rx_result(c, d);                                                \
	}

RX_BINARY(rx_add, rx_k.add)
RX_BINARY(rx_sub, rx_k.sub)
RX_BINARY(rx_mul, rx_k.mul)
RX_BINARY(rx_div, rx_k.div)
RX_BINARY(rx_maximum, rx_run_maximum_f)
RX_BINARY(rx_minimum, rx_run_minimum_f)

/* The exact unary maps: Neg flips the sign bit, Abs clears it, Relu keeps
 * NaN (its bits) and gives +0 for -0 and every other non-positive value.
 * Each is a bitwise operation on the float's bits, so every vector width
 * gives the same bits: RX_EXACT_MAP defines NAME(o, x, n) on W lanes of
 * VT (VI: the int32 vector of the same size) and then one element at a
 * time; o may be x. The AVX2 and AVX-512 variants run on the widest ISA
 * the process uses (rx_k.isa), the 4-lane one (SSE2 on x86-64) otherwise
 * (at B = 4096 a 4-lane Relu was 5% of score_pipeline). */
#define RX_NEG_V(VT, VI, a) (-(a))
#define RX_ABS_V(VT, VI, a) ((VT)((VI)(a) & 0x7fffffff))
#define RX_RELU_V(VT, VI, a) ((VT)((VI)(a) & (((a) > 0.0f) | ((a) != (a)))))
#define RX_EXACT_MAP(NAME, VEXPR, SEXPR, VT, VI, W, TGT)                              \
	TGT static void NAME(float *o, const float *x, int64_t n)                     \
	{                                                                             \
		int64_t i = 0;                                                        \
		for (; i + 2 * (W) <= n; i += 2 * (W)) {                              \
			VT a = RX_LOAD(VT, x + i), b = RX_LOAD(VT, x + i + (W));      \
			RX_STORE(o + i, VEXPR(VT, VI, a));                            \
			RX_STORE(o + i + (W), VEXPR(VT, VI, b));                      \
		}                                                                     \
		for (; i + (W) <= n; i += (W)) {                                      \
			VT a = RX_LOAD(VT, x + i);                                    \
			RX_STORE(o + i, VEXPR(VT, VI, a));                            \
		}                                                                     \
		for (; i < n; i++) {                                                  \
			float a = x[i];                                               \
			o[i] = (SEXPR);                                               \
		}                                                                     \
	}
#define RX_NEG_S (-a)
#define RX_ABS_S fabsf(a)
#define RX_RELU_S (a > 0.0f || a != a ? a : 0.0f)
typedef int32_t rx_v8i __attribute__((vector_size(32)));
typedef int32_t rx_v16i __attribute__((vector_size(64)));
RX_EXACT_MAP(rx_neg_4, RX_NEG_V, RX_NEG_S, rx_v4f, rx_v4i, 4, )
RX_EXACT_MAP(rx_abs_4, RX_ABS_V, RX_ABS_S, rx_v4f, rx_v4i, 4, )
RX_EXACT_MAP(rx_relu_4, RX_RELU_V, RX_RELU_S, rx_v4f, rx_v4i, 4, )
#ifdef RX_X86
#define RX_EXACT_WIDE(NAME, VEXPR, SEXPR)                                                               \
	RX_EXACT_MAP(NAME##_8, VEXPR, SEXPR, rx_v8f, rx_v8i, 8, __attribute__((target("avx2"))))         \
	RX_EXACT_MAP(NAME##_16, VEXPR, SEXPR, rx_v16f, rx_v16i, 16, __attribute__((target("avx512f"))))
RX_EXACT_WIDE(rx_neg, RX_NEG_V, RX_NEG_S)
RX_EXACT_WIDE(rx_abs, RX_ABS_V, RX_ABS_S)
RX_EXACT_WIDE(rx_relu, RX_RELU_V, RX_RELU_S)
#define RX_EXACT_RUN(NAME)                                                     \
	static void NAME##_run(float *o, const float *x, int64_t n)            \
	{                                                                      \
		if (rx_k.isa >= 3)                                             \
			NAME##_16(o, x, n);                                    \
		else if (rx_k.isa >= 2)                                        \
			NAME##_8(o, x, n);                                     \
		else                                                           \
			NAME##_4(o, x, n);                                     \
	}
#else
#define RX_EXACT_RUN(NAME)                                                     \
	static void NAME##_run(float *o, const float *x, int64_t n) { NAME##_4(o, x, n); }
#endif
RX_EXACT_RUN(rx_neg)
RX_EXACT_RUN(rx_abs)
RX_EXACT_RUN(rx_relu)

/* rx_sqrt_run: correctly rounded (sqrtps on x86-64, else sqrtf). */
static void rx_sqrt_run(float *o, const float *x, int64_t n)
{
	int64_t i = 0;
#ifdef RX_X86
	for (; i + 4 <= n; i += 4)
		_mm_storeu_ps(o + i, _mm_sqrt_ps(_mm_loadu_ps(x + i)));
#endif
	for (; i < n; i++)
		o[i] = sqrtf(x[i]);
}

static void rx_tanh_run(float *o, const float *x, int64_t n) { rx_k.tanh(o, x, n); }
static void rx_exp_run(float *o, const float *x, int64_t n) { rx_k.exp(o, x, n); }
static void rx_log_run(float *o, const float *x, int64_t n) { rx_k.log(o, x, n); }
static void rx_sigmoid_run(float *o, const float *x, int64_t n) { rx_k.sigmoid(o, x, n); }

/* RX_UNARY defines an elementwise float32 kernel from its map function. */
#define RX_UNARY(NAME, RUN)                                                    \
	RX_FN int NAME(rx_ctx *c, rx_val *d, rx_val *av)                       \
	{                                                                      \
		const rx_val *A = rx_operand(c, av);                           \
		if (!A)                                                        \
			return c->st->code;                                    \
		const float *x = A->data;                                      \
		int32_t r = A->rank;                                           \
		int64_t dims[RX_MAX_RANK];                                     \
		for (int32_t i = 0; i < r; i++)                                \
			dims[i] = A->dims[i];                                  \
		float *o = rx_out(c, d, RX_F32, r, dims, 0);                   \
		if (!o)                                                        \
			return c->st->code;                                    \
		if (d->len > 0)                                                \
			RUN(o, x, d->len);                                     \
		return rx_result(c, d);                                        \
	}

/* Neg, Abs, Relu: exact. Sqrt: correctly rounded. Tanh, Exp, Log, Sigmoid
 * (1/(1+exp(-x))): in float64 and rounded once (SLEEF: exp and log within 1
 * float64 ULP, tanh within 3.5; see the top of this file). */
RX_UNARY(rx_neg, rx_neg_run)
RX_UNARY(rx_tanh, rx_tanh_run)
RX_UNARY(rx_exp, rx_exp_run)
RX_UNARY(rx_log, rx_log_run)
RX_UNARY(rx_sigmoid, rx_sigmoid_run)
RX_UNARY(rx_relu, rx_relu_run)
RX_UNARY(rx_abs, rx_abs_run)
RX_UNARY(rx_sqrt, rx_sqrt_run)

/* ---- linear algebra ---------------------------------------------------- */

/* rx_matmul: [M,K] x [K,N] -> [M,N]; each element accumulates k = 0..K-1 in
 * order in float32, starting from 0 (the ISA's kernel, rx_k.mm). */
RX_FN int rx_matmul(rx_ctx *c, rx_val *d, rx_val *av, rx_val *bv)
{
	const rx_val *A = rx_operand(c, av), *B = rx_operand(c, bv);
	if (!A || !B)
		return c->st->code;
	int64_t M = A->dims[0], K = A->dims[1], N = B->dims[1];
	if (B->dims[0] != K)
		return rx_fail(c, RX_E_INTERNAL, RX_I_SHAPE, bv - c->v, 0, B->dims[0]);
	const float *x = A->data, *y = B->data;
	int64_t dims[2] = {M, N};
	float *o = rx_out(c, d, RX_F32, 2, dims, d == av || d == bv);
	if (!o)
		return c->st->code;
	if (M > 0 && N > 0)
		rx_k.mm(o, x, y, NULL, M, K, N);
	return rx_result(c, d);
}

/* rx_transpose_run writes o[N,M] = x[M,N]^T: 8x8 blocks through AVX
 * registers (AVX2 and up), 4x4 blocks through SSE registers (x86-64's
 * baseline) for the rest (an element-by-element loop stores one
 * float per cycle, which at B = 1 made the transpose of a 32x32 weight the
 * most expensive op of a call), then the edges one element at a time. */
#ifdef RX_X86
/* rx_transpose8 transposes the 8x8 block at x (row stride N) into o (row
 * stride M) through AVX registers. Rows k and k + 4 share a register, one
 * in each 128-bit half (vinsertf128 from memory), so the loads do the
 * step across halves and the transpose takes 16 in-half shuffles (two
 * 4x4 transposes per half), not 24. Written out, not as loops over
 * arrays, which GCC kept on the stack. */
#define RX_LD2(r, c) _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(x + (r) * N + (c))), _mm_loadu_ps(x + ((r) + 4) * N + (c)), 1)
#define RX_T4(a, b, c, d, h)                                                                      \
	do {                                                                                      \
		__m256 lo0 = _mm256_unpacklo_ps(a, b), hi0 = _mm256_unpackhi_ps(a, b);             \
		__m256 lo1 = _mm256_unpacklo_ps(c, d), hi1 = _mm256_unpackhi_ps(c, d);             \
		_mm256_storeu_ps(o + ((h) + 0) * M, _mm256_shuffle_ps(lo0, lo1, _MM_SHUFFLE(1, 0, 1, 0))); \
		_mm256_storeu_ps(o + ((h) + 1) * M, _mm256_shuffle_ps(lo0, lo1, _MM_SHUFFLE(3, 2, 3, 2))); \
		_mm256_storeu_ps(o + ((h) + 2) * M, _mm256_shuffle_ps(hi0, hi1, _MM_SHUFFLE(1, 0, 1, 0))); \
		_mm256_storeu_ps(o + ((h) + 3) * M, _mm256_shuffle_ps(hi0, hi1, _MM_SHUFFLE(3, 2, 3, 2))); \
	} while (0)
__attribute__((target("avx2"), always_inline)) static inline void rx_transpose8(float *o, const float *x, int64_t M, int64_t N)
{
	/* Columns 0-3 of the block: rows 0-3 in the low halves, 4-7 in the
	 * high ones; then columns 4-7. */
	__m256 r0 = RX_LD2(0, 0), r1 = RX_LD2(1, 0), r2 = RX_LD2(2, 0), r3 = RX_LD2(3, 0);
	RX_T4(r0, r1, r2, r3, 0);
	__m256 r4 = RX_LD2(0, 4), r5 = RX_LD2(1, 4), r6 = RX_LD2(2, 4), r7 = RX_LD2(3, 4);
	RX_T4(r4, r5, r6, r7, 4);
}
#undef RX_LD2
#undef RX_T4

/* rx_transpose_avx2 transposes the first M - M % 8 rows of x (M x N) into
 * o (N x M) by 8x8 blocks, the columns past the last whole block one
 * element at a time, and returns how many rows it did. */
__attribute__((target("avx2"))) static int64_t rx_transpose_avx2(float *o, const float *x, int64_t M, int64_t N)
{
	int64_t i = 0;
	for (; i + 8 <= M; i += 8) {
		int64_t j = 0;
		for (; j + 8 <= N; j += 8)
			rx_transpose8(o + j * M + i, x + i * N + j, M, N);
		for (; j < N; j++)
			for (int64_t r = 0; r < 8; r++)
				o[j * M + i + r] = x[(i + r) * N + j];
	}
	return i;
}
#endif

static void rx_transpose_run(float *o, const float *x, int64_t M, int64_t N)
{
	int64_t i = 0;
#ifdef RX_X86
	/* AVX2: 8x8 blocks over the rows and columns they cover; the 4x4 and
	 * single-element loops below do the rest. */
	if (rx_k.isa >= 2)
		i = rx_transpose_avx2(o, x, M, N);
	for (; i + 4 <= M; i += 4) {
		int64_t j = 0;
		for (; j + 4 <= N; j += 4) {
			__m128 r0 = _mm_loadu_ps(x + (i + 0) * N + j), r1 = _mm_loadu_ps(x + (i + 1) * N + j);
			__m128 r2 = _mm_loadu_ps(x + (i + 2) * N + j), r3 = _mm_loadu_ps(x + (i + 3) * N + j);
			_MM_TRANSPOSE4_PS(r0, r1, r2, r3);
			_mm_storeu_ps(o + (j + 0) * M + i, r0);
			_mm_storeu_ps(o + (j + 1) * M + i, r1);
			_mm_storeu_ps(o + (j + 2) * M + i, r2);
			_mm_storeu_ps(o + (j + 3) * M + i, r3);
		}
		for (; j < N; j++)
			for (int64_t r = 0; r < 4; r++)
				o[j * M + i + r] = x[(i + r) * N + j];
	}
#endif
	for (; i < M; i++)
		for (int64_t j = 0; j < N; j++)
			o[j * M + i] = x[i * N + j];
}

RX_FN int rx_transpose(rx_ctx *c, rx_val *d, rx_val *av)
{
	const rx_val *A = rx_operand(c, av);
	if (!A)
		return c->st->code;
	int64_t M = A->dims[0], N = A->dims[1];
	const float *x = A->data;
	int64_t dims[2] = {N, M};
	float *o = rx_out(c, d, RX_F32, 2, dims, d == av);
	if (!o)
		return c->st->code;
	rx_transpose_run(o, x, M, N);
	return rx_result(c, d);
}

/* ---- fused MatMul -------------------------------------------------------
 * The fused entry points (see rx_runtime.h) compute what generated code
 * would otherwise get from a Transpose feeding a MatMul and/or a bias Add
 * after it, with the same bits: the transposed operand is packed the same
 * way rx_transpose writes it, and the bias is added to each rounded sum in
 * the kernel's store (RX_MM_PANEL). The intermediates they skip are not
 * written; their slots' checked types are still validated, and counted,
 * as rx_result would have (rx_elide), so the counters match the unfused
 * ops. */

/* rx_elide_dims validates the shape (rank, dims) that an elided
 * intermediate t would have had against t's checked type, as rx_result
 * validates a written result, and counts it as one. t keeps no data and is
 * not stamped: nothing reads it (codegen fuses only such temporaries). */
static int rx_elide_dims(rx_ctx *c, rx_val *t, int32_t rank, const int64_t *dims)
{
	const rx_type *ty = t->type;
	c->st->result_validations++;
	c->st->fact_queries++;
	if (ty->dtype != RX_F32 || ty->rank != rank)
		return rx_fail(c, RX_E_INTERNAL, RX_I_RESULT, t - c->v, -1, rank);
	for (int32_t i = 0; i < rank; i++)
		if (rx_dim_of(c, ty->dims[i]) != dims[i])
			return rx_fail(c, RX_E_INTERNAL, RX_I_RESULT, t - c->v, i, dims[i]);
	return RX_OK;
}

/* rx_elide: rx_elide_dims of the rank-2 shape [r0, r1]. */
static int rx_elide(rx_ctx *c, rx_val *t, int64_t r0, int64_t r1)
{
	int64_t dims[2] = {r0, r1};
	return rx_elide_dims(c, t, 2, dims);
}

/* RX_BT_PACK is the largest K*N whose transposed operand rx_linear packs
 * on its stack (16 KB: 64x64, or 2x2048); bigger ones are transposed into their
 * slot, exactly as rx_transpose would. */
#define RX_BT_PACK 4096

/* RX_LIN_TILE is how many rows rx_linear computes before it applies Tanh
 * to them, so that they are still in L1 (64 rows of up to 64 floats). */
#define RX_LIN_TILE 64

/* rx_linear: d = act(a x b' (+ bias)) with b' = b^T (bt; t its elided slot)
 * or b; m is the elided slot of the product when there is a bias, s that
 * of the sum when act (Tanh) follows. Tanh is rx_k.tanh, rx_tanh's map,
 * applied to each tile of rows as soon as the kernel has written it: each
 * element's value does not depend on its neighbours, so the bits are
 * rx_tanh's. */
static int rx_linear(rx_ctx *c, rx_val *d, rx_val *av, rx_val *bv, rx_val *cv, int bt, rx_val *t, rx_val *m,
		     rx_val *s)
{
	const rx_val *A = rx_operand(c, av), *B = rx_operand(c, bv), *C = NULL;
	if (!A || !B)
		return c->st->code;
	if (cv && !(C = rx_operand(c, cv)))
		return c->st->code;
	int64_t M = A->dims[0], K = A->dims[1], N = bt ? B->dims[0] : B->dims[1];
	if ((bt ? B->dims[1] : B->dims[0]) != K)
		return rx_fail(c, RX_E_INTERNAL, RX_I_SHAPE, bv - c->v, bt, K);
	if (C && (C->rank != 1 || C->dims[0] != N))
		return rx_fail(c, RX_E_INTERNAL, RX_I_SHAPE, cv - c->v, 0, C->rank == 1 ? C->dims[0] : -1);
	const float *y = B->data;
	int small = K <= RX_BT_PACK && N <= RX_BT_PACK && K * N <= RX_BT_PACK;
	float pack[bt && small ? RX_BT_PACK : 1] __attribute__((aligned(64)));
	if (bt) {
		if (small) {
			if (rx_elide(c, t, K, N) != RX_OK)
				return c->st->code;
			rx_transpose_run(pack, y, N, K);
			y = pack;
		} else {
			int64_t tdims[2] = {K, N};
			float *p = rx_out(c, t, RX_F32, 2, tdims, t == bv);
			if (!p)
				return c->st->code;
			rx_transpose_run(p, y, N, K);
			if (rx_result(c, t) != RX_OK)
				return c->st->code;
			y = p;
		}
	}
	if (C && rx_elide(c, m, M, N) != RX_OK)
		return c->st->code;
	if (s && rx_elide(c, s, M, N) != RX_OK)
		return c->st->code;
	/* The operands' data is read before rx_out: d may be a or the bias,
	 * and rx_out changes d's data. */
	const float *x = A->data, *bias = C ? C->data : NULL;
	int64_t dims[2] = {M, N};
	float *o = rx_out(c, d, RX_F32, 2, dims, d == av || d == bv || d == cv);
	if (!o)
		return c->st->code;
	if (M > 0 && N > 0) {
		if (!s) {
			rx_k.mm(o, x, y, bias, M, K, N);
		} else {
			for (int64_t i = 0; i < M; i += RX_LIN_TILE) {
				int64_t rows = M - i < RX_LIN_TILE ? M - i : RX_LIN_TILE;
				rx_k.mm(o + i * N, x + i * K, y, bias, rows, K, N);
				rx_k.tanh(o + i * N, o + i * N, rows * N);
			}
		}
	}
	return rx_result(c, d);
}

RX_FN int rx_matmul_bt(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *t)
{
	return rx_linear(c, d, a, b, NULL, 1, t, NULL, NULL);
}

RX_FN int rx_matmul_bias(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *bias, rx_val *m)
{
	return rx_linear(c, d, a, b, bias, 0, NULL, m, NULL);
}

RX_FN int rx_matmul_bt_bias(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *bias, rx_val *t, rx_val *m)
{
	return rx_linear(c, d, a, b, bias, 1, t, m, NULL);
}

RX_FN int rx_matmul_bias_tanh(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *bias, rx_val *m, rx_val *s)
{
	return rx_linear(c, d, a, b, bias, 0, NULL, m, s);
}

RX_FN int rx_matmul_bt_bias_tanh(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *bias, rx_val *t, rx_val *m,
				 rx_val *s)
{
	return rx_linear(c, d, a, b, bias, 1, t, m, s);
}

/* ---- fused elementwise pairs -------------------------------------------
 * rx_ew2 computes t = op1(a, b); d = op2(t, cc) (see rx_runtime.h) a tile
 * of rows at a time: op1 writes the tile into d's buffer and op2 updates
 * it in place while it is in L1, with the row functions of rx_add, rx_sub,
 * rx_mul and rx_div (rx_k), so every element gets the same two IEEE
 * operations as the ops one by one. The fast path takes a of d's shape
 * and b, cc each of that shape, a row of its last dimension (rank 1) or a
 * single element (of rank <= a's); any other shapes run the two ops
 * through t's slot. */

/* RX_EW_TILE is how many elements rx_ew2 runs through both ops at once. */
#define RX_EW_TILE 1024

/* rx_ew_run returns op's row function, or NULL. */
static rx_run_fn rx_ew_run(int32_t op)
{
	switch (op) {
	case RX_EW_ADD:
		return rx_k.add;
	case RX_EW_SUB:
		return rx_k.sub;
	case RX_EW_MUL:
		return rx_k.mul;
	case RX_EW_DIV:
		return rx_k.div;
	}
	return NULL;
}

/* rx_ew_op runs op as its own kernel (rx_add, ...), or fails. */
static int rx_ew_op(rx_ctx *c, int32_t op, rx_val *d, rx_val *a, rx_val *b)
{
	switch (op) {
	case RX_EW_ADD:
		return rx_add(c, d, a, b);
	case RX_EW_SUB:
		return rx_sub(c, d, a, b);
	case RX_EW_MUL:
		return rx_mul(c, d, a, b);
	case RX_EW_DIV:
		return rx_div(c, d, a, b);
	}
	return rx_fail(c, RX_E_INTERNAL, RX_I_SHAPE, d - c->v, -1, op);
}

/* rx_ew_kind classifies operand y against a (rank r >= 0, n elements, rows
 * of m): 2 of a's shape, 1 a row of m (rank 1), 0 one element; -1 else. */
static int rx_ew_kind(const rx_val *y, const rx_val *a)
{
	if (y->rank == a->rank) {
		int same = 1;
		for (int32_t i = 0; i < a->rank; i++)
			same &= y->dims[i] == a->dims[i];
		if (same)
			return 2;
	}
	if (y->len == 1 && y->rank <= a->rank)
		return 0;
	if (y->rank == 1 && a->rank >= 1 && y->dims[0] == a->dims[a->rank - 1])
		return 1;
	return -1;
}

RX_FN int rx_ew2(rx_ctx *c, rx_val *d, rx_val *av, rx_val *bv, int32_t op1, rx_val *cv, int32_t op2, rx_val *tv)
{
	const rx_val *A = rx_operand(c, av), *B = rx_operand(c, bv), *C = rx_operand(c, cv);
	if (!A || !B || !C)
		return c->st->code;
	rx_run_fn f1 = rx_ew_run(op1), f2 = rx_ew_run(op2);
	int kb = rx_ew_kind(B, A), kc = rx_ew_kind(C, A);
	if (!f1 || !f2 || kb < 0 || kc < 0) {
		int rc = rx_ew_op(c, op1, tv, av, bv);
		return rc != RX_OK ? rc : rx_ew_op(c, op2, d, tv, cv);
	}
	if (rx_elide_dims(c, tv, A->rank, A->dims) != RX_OK)
		return c->st->code;
	const float *x = A->data, *y = B->data, *z = C->data;
	int64_t n = A->len, m = A->rank > 0 ? A->dims[A->rank - 1] : 1;
	/* op1 writes d before op2 reads cc (and b): a d that is one of them
	 * gets a fresh buffer; a is read at an element before it is written. */
	float *o = rx_out(c, d, RX_F32, A->rank, A->dims, d == bv || d == cv);
	if (!o)
		return c->st->code;
	if (n > 0 && m > 0) {
		int64_t rows = n / m, step = m < RX_EW_TILE ? RX_EW_TILE / m : 1;
		int64_t byr = kb == 2 ? m : 0, by = kb > 0, bzr = kc == 2 ? m : 0, bz = kc > 0;
		for (int64_t r = 0; r < rows; r += step) {
			int64_t k = rows - r < step ? rows - r : step;
			float *ot = o + r * m;
			f1(ot, x + r * m, m, 1, y + r * byr, byr, by, k, m);
			f2(ot, ot, m, 1, z + r * bzr, bzr, bz, k, m);
		}
	}
	return rx_result(c, d);
}

/* rx_ew_const: d = op(a, k) for a float32 constant k that generated code
 * would have stored in the rank-0 slot t (rx_const_f) just before: the
 * same row function over a with k broadcast, so the same bits as rx_add,
 * rx_sub, rx_mul or rx_div with t. t is validated and counted as
 * rx_const_f's result, and not written. */
RX_FN int rx_ew_const(rx_ctx *c, rx_val *d, rx_val *av, int32_t op, float k, rx_val *tv)
{
	const rx_val *A = rx_operand(c, av);
	if (!A)
		return c->st->code;
	rx_run_fn f = rx_ew_run(op);
	if (!f)
		return rx_fail(c, RX_E_INTERNAL, RX_I_SHAPE, d - c->v, -1, op);
	if (rx_elide_dims(c, tv, 0, NULL) != RX_OK)
		return c->st->code;
	/* a's data is read before rx_out: d may be a, and rx_out changes d's
	 * data (to the Go output buffer when d is a result slot). */
	const float *x = A->data;
	int64_t len = A->len;
	float *o = rx_out(c, d, RX_F32, A->rank, A->dims, 0);
	if (!o)
		return c->st->code;
	if (len > 0)
		f(o, x, 0, 1, &k, 0, 0, 1, len);
	return rx_result(c, d);
}

/* ---- along an axis ----------------------------------------------------- */

/* rx_axis views a as [outer, n, inner] around axis. */
static void rx_axis(const rx_val *a, int32_t axis, int64_t *outer, int64_t *n, int64_t *inner)
{
	*outer = 1;
	*inner = 1;
	for (int32_t i = 0; i < axis; i++)
		*outer *= a->dims[i];
	*n = a->dims[axis];
	for (int32_t i = axis + 1; i < a->rank; i++)
		*inner *= a->dims[i];
}

/* rx_row_pmax is the plain maximum of x[0..n) (n > 0; the value only: which
 * of -0 and +0, or anything when the row holds a NaN) and sets *nan to
 * whether it holds one; on 4 lanes, without a branch per element. */
static inline float rx_row_pmax(const float *x, int64_t n, int *nan)
{
	int64_t k = 0;
	float m = x[0];
	int bad = 0;
#ifdef RX_X86
	if (n >= 4) {
		__m128 vm = _mm_loadu_ps(x), vn = _mm_cmpunord_ps(vm, vm);
		for (k = 4; k + 4 <= n; k += 4) {
			__m128 v = _mm_loadu_ps(x + k);
			vm = _mm_max_ps(vm, v);
			vn = _mm_or_ps(vn, _mm_cmpunord_ps(v, v));
		}
		vm = _mm_max_ps(vm, _mm_movehl_ps(vm, vm));
		vm = _mm_max_ss(vm, _mm_shuffle_ps(vm, vm, 1));
		m = _mm_cvtss_f32(vm);
		bad = _mm_movemask_ps(vn) != 0;
	}
#endif
	for (; k < n; k++) {
		float v = x[k];
		m = v > m ? v : m;
		bad |= v != v;
	}
	*nan = bad;
	return m;
}

/* rx_row_max is the NaN-propagating maximum of x[0..n) (n > 0), rx_maxf's
 * fold: a plain maximum, redone with rx_maxf when the row holds a NaN or
 * the maximum is a zero (whose sign rx_maxf decides). */
static float rx_row_max(const float *x, int64_t n)
{
	int nan;
	float m = rx_row_pmax(x, n, &nan);
	if (nan || m == 0.0f) {
		m = x[0];
		for (int64_t k = 1; k < n; k++)
			m = rx_maxf(m, x[k]);
	}
	return m;
}

/* rx_row_sums sets s[p] to the float32 sum of row p of x (rows rows of n
 * elements), each from 0 in index order, as one row's loop would: four
 * rows at a time, so that their chains of dependent additions overlap
 * (at 8 classes a row's sum was most of Softmax's time). */
static void rx_row_sums(float *s, const float *x, int64_t rows, int64_t n)
{
	int64_t p = 0;
	for (; p + 4 <= rows; p += 4) {
		const float *r = x + p * n;
		float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
		for (int64_t k = 0; k < n; k++) {
			s0 += r[k];
			s1 += r[n + k];
			s2 += r[2 * n + k];
			s3 += r[3 * n + k];
		}
		s[p] = s0;
		s[p + 1] = s1;
		s[p + 2] = s2;
		s[p + 3] = s3;
	}
	for (; p < rows; p++) {
		const float *r = x + p * n;
		float t = 0.0f;
		for (int64_t k = 0; k < n; k++)
			t += r[k];
		s[p] = t;
	}
}

#ifdef RX_X86
/* The narrow-row kernels: rows of 8 elements along the last axis on
 * AVX-512, two rows to a vector (one in each 256-bit half), so that a
 * tile needs no gathers or transposes. Each does what one row's loop does,
 * with the same IEEE operations in the same order: the same bits. */
#define RX_T512N __attribute__((target("avx512f,avx512dq")))

/* rx_hmax8 sets every lane to the plain maximum of its 8-lane half (taken
 * in no particular order: the value of a row without NaN, but not the sign
 * of a zero maximum). */
RX_T512N static inline __m512 rx_hmax8(__m512 v)
{
	v = _mm512_max_ps(v, _mm512_permute_ps(v, 0xB1));
	v = _mm512_max_ps(v, _mm512_permute_ps(v, 0x4E));
	return _mm512_max_ps(v, _mm512_shuffle_f32x4(v, v, 0xB1));
}

/* rx_sm_sub8 sets o to x minus each row's rx_row_max, for rows (even)
 * rows of 8: rx_hmax8, redone with rx_row_max for a row that holds a NaN
 * or whose maximum is a zero (as rx_row_max does); each element x - m in
 * float32, as rx_run_sub. */
RX_T512N static void rx_sm_sub8(float *o, const float *x, int64_t rows)
{
	for (int64_t p = 0; p < rows; p += 2) {
		__m512 v = _mm512_loadu_ps(x + p * 8), m = rx_hmax8(v);
		__mmask16 bad = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) |
				_mm512_cmp_ps_mask(m, _mm512_setzero_ps(), _CMP_EQ_OQ);
		if (__builtin_expect(bad != 0, 0)) {
			if (bad & 0x00FF)
				m = _mm512_mask_mov_ps(m, 0x00FF, _mm512_set1_ps(rx_row_max(x + p * 8, 8)));
			if (bad & 0xFF00)
				m = _mm512_mask_mov_ps(m, 0xFF00, _mm512_set1_ps(rx_row_max(x + p * 8 + 8, 8)));
		}
		_mm512_storeu_ps(o + p * 8, _mm512_sub_ps(v, m));
	}
}

/* rx_sm_div8 divides each element of rows (even) rows of 8 at o by its
 * row's sum, the float32 sum from 0 in index order (rx_row_sums' sum:
 * element k of each row broadcast over its half and added, k = 0..7), as
 * rx_run_div: e / s. */
RX_T512N static void rx_sm_div8(float *o, int64_t rows)
{
	__m512i idx[8];
	for (int k = 0; k < 8; k++)
		idx[k] = _mm512_mask_mov_epi32(_mm512_set1_epi32(k), 0xFF00, _mm512_set1_epi32(k + 8));
	for (int64_t p = 0; p < rows; p += 2) {
		__m512 e = _mm512_loadu_ps(o + p * 8), s = _mm512_setzero_ps();
		for (int k = 0; k < 8; k++)
			s = _mm512_add_ps(s, _mm512_permutexvar_ps(idx[k], e));
		_mm512_storeu_ps(o + p * 8, _mm512_div_ps(e, s));
	}
}

/* rx_argmax8 sets o[p] to rx_argmax's index for rows (even) rows of 8:
 * the first NaN of a row holding one (rows with a NaN take the scalar
 * rule), else the lowest index equal to the row's plain maximum (the first
 * of tied values, -0 and +0 alike). */
RX_T512N static void rx_argmax8(int64_t *o, const float *x, int64_t rows)
{
	for (int64_t p = 0; p < rows; p += 2) {
		__m512 v = _mm512_loadu_ps(x + p * 8);
		__mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
		/* A row with a NaN has a bit set for each NaN: its lowest. */
		uint32_t hit = nan;
		if (!(nan & 0x00FF))
			hit |= _mm512_cmp_ps_mask(v, rx_hmax8(v), _CMP_EQ_OQ) & 0x00FF;
		if (!(nan & 0xFF00))
			hit |= _mm512_cmp_ps_mask(v, rx_hmax8(v), _CMP_EQ_OQ) & 0xFF00;
		o[p] = __builtin_ctz(hit & 0xFF);
		o[p + 1] = __builtin_ctz(hit >> 8);
	}
}
#endif

/* RX_SM_TILE is how many elements Softmax exponentiates at once: a tile of
 * whole rows (or a piece of one long row), 4 KB, in L1. */
#define RX_SM_TILE 1024

/* rx_softmax (lsm = 0) and log-softmax (lsm = 1), stable: the max along the
 * axis (NaN-propagating) is subtracted in float32 before exponentiating;
 * exp and log are the float64 ones rounded once (rx_k.exp, as Exp); the sum
 * runs in index order. Softmax divides each exp by the sum; LogSoftmax
 * subtracts log(sum) from each difference. Along the last axis the rows are
 * processed a tile at a time, so the exps run over whole vectors. */
static int rx_softmax_impl(rx_ctx *c, rx_val *d, rx_val *av, int32_t axis, int lsm)
{
	const rx_val *A = rx_operand(c, av);
	if (!A)
		return c->st->code;
	int64_t outer, n, inner, dims[RX_MAX_RANK];
	rx_axis(A, axis, &outer, &n, &inner);
	const float *x = A->data;
	for (int32_t i = 0; i < A->rank; i++)
		dims[i] = A->dims[i];
	float *o = rx_out(c, d, RX_F32, A->rank, dims, d == av);
	if (!o)
		return c->st->code;
	if (n == 0 || outer == 0 || inner == 0)
		return rx_result(c, d);
	if (inner == 1) {
		float tmp[RX_SM_TILE];
		int64_t rows = n <= RX_SM_TILE ? RX_SM_TILE / n : 1;
		/* Softmax of rows of 8 on AVX-512: the narrow kernels take
		 * each tile's rows two at a time (a tile holds 128). */
		int narrow = 0;
#ifdef RX_X86
		narrow = !lsm && n == 8 && rx_k.isa >= 3;
#endif
		for (int64_t p0 = 0; p0 < outer; p0 += rows) {
			int64_t pe = p0 + rows < outer ? p0 + rows : outer;
			int64_t pn = narrow ? p0 + ((pe - p0) & ~(int64_t)1) : p0;
#ifdef RX_X86
			if (pn > p0)
				rx_sm_sub8(o + p0 * n, x + p0 * n, pn - p0);
#endif
			/* The differences from each row's max, into o. */
			for (int64_t p = pn; p < pe; p++) {
				const float *xr = x + p * n;
				float *orow = o + p * n;
				float m = rx_row_max(xr, n);
				rx_run_sub(orow, xr, 1, &m, 0, n);
			}
			if (!lsm) {
				/* exp in place, then each row's sum (rx_row_sums,
				 * into tmp: a tile has at most RX_SM_TILE rows) and
				 * quotients. */
				rx_k.exp(o + p0 * n, o + p0 * n, (pe - p0) * n);
#ifdef RX_X86
				if (pn > p0)
					rx_sm_div8(o + p0 * n, pn - p0);
#endif
				rx_row_sums(tmp, o + pn * n, pe - pn, n);
				for (int64_t p = pn; p < pe; p++) {
					float *orow = o + p * n;
					rx_run_div(orow, orow, 1, &tmp[p - pn], 0, n);
				}
				continue;
			}
			/* exp into tmp, each row's sum in order, then the
			 * differences minus log(sum). */
			if (n <= RX_SM_TILE)
				rx_k.exp(tmp, o + p0 * n, (pe - p0) * n);
			for (int64_t p = p0; p < pe; p++) {
				float *orow = o + p * n, s = 0.0f;
				if (n <= RX_SM_TILE) {
					const float *e = tmp + (p - p0) * n;
					for (int64_t k = 0; k < n; k++)
						s += e[k];
				} else {
					for (int64_t k0 = 0; k0 < n; k0 += RX_SM_TILE) {
						int64_t len = n - k0 < RX_SM_TILE ? n - k0 : RX_SM_TILE;
						rx_k.exp(tmp, orow + k0, len);
						for (int64_t k = 0; k < len; k++)
							s += tmp[k];
					}
				}
				float ls = rx_log1(s);
				rx_run_sub(orow, orow, 1, &ls, 0, n);
			}
		}
		return rx_result(c, d);
	}
	for (int64_t p = 0; p < outer; p++) {
		for (int64_t q = 0; q < inner; q++) {
			const float *xr = x + p * n * inner + q;
			float *orow = o + p * n * inner + q;
			float m = xr[0];
			for (int64_t k = 1; k < n; k++)
				m = rx_maxf(m, xr[k * inner]);
			float s = 0.0f;
			if (lsm) {
				for (int64_t k = 0; k < n; k++)
					s += rx_exp1(xr[k * inner] - m);
				float ls = rx_log1(s);
				for (int64_t k = 0; k < n; k++)
					orow[k * inner] = xr[k * inner] - m - ls;
			} else {
				for (int64_t k = 0; k < n; k++) {
					float e = rx_exp1(xr[k * inner] - m);
					orow[k * inner] = e;
					s += e;
				}
				for (int64_t k = 0; k < n; k++)
					orow[k * inner] = orow[k * inner] / s;
			}
		}
	}
	return rx_result(c, d);
}

RX_FN int rx_softmax(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis) { return rx_softmax_impl(c, d, a, axis, 0); }
RX_FN int rx_logsoftmax(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis) { return rx_softmax_impl(c, d, a, axis, 1); }

enum { RX_R_SUM, RX_R_MEAN, RX_R_MAX };

/* rx_reduce: Sum, Mean (Sum / n) or Max (NaN-propagating) along axis, with
 * the axis dropped or kept with size 1. */
static int rx_reduce(rx_ctx *c, rx_val *d, rx_val *av, int32_t axis, int keep, int kind)
{
	const rx_val *A = rx_operand(c, av);
	if (!A)
		return c->st->code;
	int64_t outer, n, inner, dims[RX_MAX_RANK];
	int32_t r = 0;
	rx_axis(A, axis, &outer, &n, &inner);
	for (int32_t i = 0; i < A->rank; i++) {
		if (i == axis) {
			if (keep)
				dims[r++] = 1;
		} else {
			dims[r++] = A->dims[i];
		}
	}
	const float *x = A->data;
	float *o = rx_out(c, d, RX_F32, r, dims, d == av);
	if (!o)
		return c->st->code;
	for (int64_t p = 0; p < outer; p++) {
		for (int64_t q = 0; q < inner; q++) {
			const float *xr = x + p * n * inner + q;
			float s;
			if (kind == RX_R_MAX) {
				s = n > 0 ? xr[0] : -INFINITY;
				for (int64_t k = 1; k < n; k++)
					s = rx_maxf(s, xr[k * inner]);
			} else {
				s = 0.0f;
				for (int64_t k = 0; k < n; k++)
					s += xr[k * inner];
				if (kind == RX_R_MEAN)
					s = s / (float)n;
			}
			o[p * inner + q] = s;
		}
	}
	return rx_result(c, d);
}

RX_FN int rx_sum(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis, int keep) { return rx_reduce(c, d, a, axis, keep, RX_R_SUM); }
RX_FN int rx_mean(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis, int keep) { return rx_reduce(c, d, a, axis, keep, RX_R_MEAN); }
RX_FN int rx_max(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis, int keep) { return rx_reduce(c, d, a, axis, keep, RX_R_MAX); }

/* rx_argmax_scalar: Argmax of a rank-1 tensor (axis 0) into an int64
 * scalar, with rx_argmax's rule: the first maximum, the first NaN wins. */
RX_FN int rx_argmax_scalar(rx_ctx *c, rx_val *av, int32_t axis, int64_t *out)
{
	const rx_val *A = rx_operand(c, av);
	if (!A)
		return c->st->code;
	(void)axis;
	const float *x = A->data;
	int64_t n = A->rank == 1 ? A->dims[0] : 0, best = 0;
	if (n > 0 && x[0] == x[0]) {
		float bv = x[0];
		for (int64_t k = 1; k < n; k++) {
			if (x[k] != x[k]) {
				best = k;
				break;
			}
			if (x[k] > bv) {
				bv = x[k];
				best = k;
			}
		}
	}
	*out = best;
	return RX_OK;
}

/* rx_argmax_k: the index of the first maximum along axis; the first NaN
 * wins. The axis is removed, or kept with size 1 (keep): the indices are
 * the same, in the same order. */
static int rx_argmax_k(rx_ctx *c, rx_val *d, rx_val *av, int32_t axis, int keep)
{
	const rx_val *A = rx_operand(c, av);
	if (!A)
		return c->st->code;
	int64_t outer, n, inner, dims[RX_MAX_RANK];
	int32_t r = 0;
	rx_axis(A, axis, &outer, &n, &inner);
	for (int32_t i = 0; i < A->rank; i++)
		if (i != axis)
			dims[r++] = A->dims[i];
		else if (keep)
			dims[r++] = 1;
	const float *x = A->data;
	int64_t *o = rx_out(c, d, RX_I64, r, dims, 0);
	if (!o)
		return c->st->code;
	if (inner == 1 && n > 0) {
		/* Along the last axis: the row's plain maximum and whether it
		 * holds a NaN, without branches; then the first index holding
		 * the maximum (the first of tied values, as the rule below:
		 * v > bv never prefers a later equal value, -0 and +0 alike),
		 * or of the first NaN. */
		int64_t p = 0;
#ifdef RX_X86
		if (n == 8 && rx_k.isa >= 3) {
			p = outer & ~(int64_t)1;
			rx_argmax8(o, x, p);
		}
#endif
		for (; p < outer; p++) {
			const float *xr = x + p * n;
			int nan;
			float m = rx_row_pmax(xr, n, &nan);
			int64_t best = 0;
			if (nan) {
				while (xr[best] == xr[best])
					best++; /* the first NaN wins */
			} else if (n <= 64) {
				/* Without a branch per element: a bit per index
				 * holding m, and the lowest one. */
				uint64_t hit = 0;
				int64_t k = 0;
#ifdef RX_X86
				__m128 vm = _mm_set1_ps(m);
				for (; k + 4 <= n; k += 4)
					hit |= (uint64_t)_mm_movemask_ps(_mm_cmpeq_ps(_mm_loadu_ps(xr + k), vm)) << k;
#endif
				for (; k < n; k++)
					hit |= (uint64_t)(xr[k] == m) << k;
				best = __builtin_ctzll(hit);
			} else {
				while (xr[best] != m)
					best++;
			}
			o[p] = best;
		}
		return rx_result(c, d);
	}
	for (int64_t p = 0; p < outer; p++) {
		for (int64_t q = 0; q < inner; q++) {
			const float *xr = x + p * n * inner + q;
			int64_t best = 0;
			if (n > 0 && xr[0] == xr[0]) {
				float bv = xr[0];
				for (int64_t k = 1; k < n; k++) {
					float v = xr[k * inner];
					if (v != v) {
						best = k;
						break;
					}
					if (v > bv) {
						bv = v;
						best = k;
					}
				}
			}
			o[p * inner + q] = best;
		}
	}
	return rx_result(c, d);
}

/* rx_argmax: Argmax along axis, which is removed. */
RX_FN int rx_argmax(rx_ctx *c, rx_val *d, rx_val *av, int32_t axis) { return rx_argmax_k(c, d, av, axis, 0); }

/* rx_argmax_keep: Argmax along axis, which is kept with size 1. */
RX_FN int rx_argmax_keep(rx_ctx *c, rx_val *d, rx_val *av, int32_t axis) { return rx_argmax_k(c, d, av, axis, 1); }
