/*
 * rx_kernels.c: rxeq's own float32 kernels behind rx_runtime.h (executor
 * "native"), linked with rx_context.c into one runtime library.
 *
 * Numerics are float32 throughout (built with -ffp-contract=off): tanhf,
 * expf, logf, sqrtf; reductions and MatMul accumulate in increasing index
 * order; Maximum/Minimum/Max propagate NaN; Argmax returns the first maximum
 * and the first NaN.
 */
#include "rx_internal.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define RX_FN

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

/* RX_BINARY defines a broadcasting float32 kernel computing EXPR from a and
 * b. The destination may be one of the operands: every output element reads
 * only its own index of a full-shape operand. */
#define RX_BINARY(NAME, EXPR)                                                          \
	RX_FN int NAME(rx_ctx *c, rx_val *d, rx_val *av, rx_val *bv)                   \
	{                                                                              \
		const rx_val *A = rx_operand(c, av), *B = rx_operand(c, bv);           \
		if (!A || !B)                                                          \
			return c->st->code;                                            \
		int32_t r;                                                             \
		int64_t od[RX_MAX_RANK], sa[RX_MAX_RANK], sb[RX_MAX_RANK];             \
		if (rx_bcast(c, A, B, &r, od, sa, sb) != RX_OK)                        \
			return c->st->code;                                            \
		const float *x = A->data, *y = B->data;                                \
		int64_t na = A->len, nb = B->len;                                      \
		float *o = rx_out(c, d, RX_F32, r, od + (RX_MAX_RANK - r), 0);         \
		if (!o)                                                                \
			return c->st->code;                                            \
		int64_t n = d->len;                                                    \
		if (na == n && nb == n) {                                              \
			for (int64_t i = 0; i < n; i++) {                              \
				float a = x[i], b = y[i];                              \
				o[i] = (EXPR);                                         \
			}                                                              \
		} else if (nb == 1 && na == n) {                                       \
			float b = y[0];                                                \
			for (int64_t i = 0; i < n; i++) {                              \
				float a = x[i];                                        \
				o[i] = (EXPR);                                         \
			}                                                              \
		} else if (na == 1 && nb == n) {                                       \
			float a = x[0];                                                \
			for (int64_t i = 0; i < n; i++) {                              \
				float b = y[i];                                        \
				o[i] = (EXPR);                                         \
			}                                                              \
		} else if (n > 0) {                                                    \
			int64_t k = 0, m = od[3];                                      \
			for (int64_t i0 = 0; i0 < od[0]; i0++)                         \
			for (int64_t i1 = 0; i1 < od[1]; i1++)                         \
			for (int64_t i2 = 0; i2 < od[2]; i2++) {                       \
				const float *xa = x + i0 * sa[0] + i1 * sa[1] + i2 * sa[2];\
				const float *yb = y + i0 * sb[0] + i1 * sb[1] + i2 * sb[2];\
				float *oo = o + k;                                     \
				if (sa[3] == 1 && sb[3] == 1) {                        \
					for (int64_t j = 0; j < m; j++) {              \
						float a = xa[j], b = yb[j];            \
						oo[j] = (EXPR);                        \
					}                                              \
				} else if (sa[3] == 1) {                               \
					float b = yb[0];                               \
					for (int64_t j = 0; j < m; j++) {              \
						float a = xa[j];                       \
						oo[j] = (EXPR);                        \
					}                                              \
				} else if (sb[3] == 1) {                               \
					float a = xa[0];                               \
					for (int64_t j = 0; j < m; j++) {              \
						float b = yb[j];                       \
						oo[j] = (EXPR);                        \
					}                                              \
				} else {                                               \
					float a = xa[0], b = yb[0], v = (EXPR);        \
					for (int64_t j = 0; j < m; j++)                \
						oo[j] = v;                             \
				}                                                      \
				k += m;                                                \
			}                                                              \
		}                                                                      \
		return rx_result(c, d);                                                \
	}

RX_BINARY(rx_add, a + b)
RX_BINARY(rx_sub, a - b)
RX_BINARY(rx_mul, a * b)
RX_BINARY(rx_div, a / b)
RX_BINARY(rx_maximum, rx_maxf(a, b))
RX_BINARY(rx_minimum, rx_minf(a, b))

/* RX_UNARY defines an elementwise float32 kernel computing EXPR from a. */
#define RX_UNARY(NAME, EXPR)                                                   \
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
		int64_t n = d->len;                                            \
		for (int64_t i = 0; i < n; i++) {                              \
			float a = x[i];                                        \
			o[i] = (EXPR);                                         \
		}                                                              \
		return rx_result(c, d);                                        \
	}

RX_UNARY(rx_neg, -a)
RX_UNARY(rx_tanh, tanhf(a))
RX_UNARY(rx_exp, expf(a))
RX_UNARY(rx_log, logf(a))
RX_UNARY(rx_sigmoid, 1.0f / (1.0f + expf(-a)))
RX_UNARY(rx_relu, a > 0.0f ? a : (a != a ? a : 0.0f))
RX_UNARY(rx_abs, fabsf(a))
RX_UNARY(rx_sqrt, sqrtf(a))

/* ---- linear algebra ---------------------------------------------------- */

#define RX_MM_BLOCK 8

/* rx_matmul: [M,K] x [K,N] -> [M,N]; each element accumulates k = 0..K-1 in
 * order in float32, starting from 0. */
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
	/* Columns in blocks of RX_MM_BLOCK with the accumulators in a local
	 * array: a fixed-length inner loop the compiler vectorises at -O2
	 * without changing any element's summation order. */
	for (int64_t i = 0; i < M; i++) {
		float *row = o + i * N;
		const float *xr = x + i * K;
		int64_t j = 0;
		for (; j + RX_MM_BLOCK <= N; j += RX_MM_BLOCK) {
			float acc[RX_MM_BLOCK] = {0};
			for (int64_t k = 0; k < K; k++) {
				float a = xr[k];
				const float *yr = y + k * N + j;
				for (int b = 0; b < RX_MM_BLOCK; b++)
					acc[b] += a * yr[b];
			}
			for (int b = 0; b < RX_MM_BLOCK; b++)
				row[j + b] = acc[b];
		}
		for (; j < N; j++) {
			float acc = 0.0f;
			for (int64_t k = 0; k < K; k++)
				acc += xr[k] * y[k * N + j];
			row[j] = acc;
		}
	}
	return rx_result(c, d);
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
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++)
			o[j * M + i] = x[i * N + j];
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

/* rx_softmax (log = 0) and log-softmax (log = 1), stable: the max along the
 * axis is subtracted before exponentiating; the sum runs in index order. */
static int rx_softmax_impl(rx_ctx *c, rx_val *d, rx_val *av, int32_t axis, int log)
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
	for (int64_t p = 0; p < outer; p++) {
		for (int64_t q = 0; q < inner; q++) {
			const float *xr = x + p * n * inner + q;
			float *orow = o + p * n * inner + q;
			if (n == 0)
				continue;
			float m = xr[0];
			for (int64_t k = 1; k < n; k++)
				m = rx_maxf(m, xr[k * inner]);
			float s = 0.0f;
			if (log) {
				for (int64_t k = 0; k < n; k++)
					s += expf(xr[k * inner] - m);
				float ls = logf(s);
				for (int64_t k = 0; k < n; k++)
					orow[k * inner] = xr[k * inner] - m - ls;
			} else {
				for (int64_t k = 0; k < n; k++) {
					float e = expf(xr[k * inner] - m);
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

/* rx_argmax: the index of the first maximum along axis; the first NaN wins. */
RX_FN int rx_argmax(rx_ctx *c, rx_val *d, rx_val *av, int32_t axis)
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
	const float *x = A->data;
	int64_t *o = rx_out(c, d, RX_I64, r, dims, 0);
	if (!o)
		return c->st->code;
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
