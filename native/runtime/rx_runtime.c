/*
 * rx_runtime.c: the invocation context and the tensor kernels of rxeq's
 * native backend. Every generated translation unit includes this file, so
 * all of it is static: a loaded library exports only its rx_fn_* entry
 * points and no two libraries can interpose on each other.
 *
 * One call = one rx_ctx, opened by the generated prologue (rx_open) and
 * closed by its epilogue (rx_close). Values live in slots (rx_val). A slot's
 * facts (dtype, rank, dims) are derived and checked exactly once per write:
 * inputs by rx_check_input on entry, op results by rx_result before they are
 * stamped trusted. Kernels read operand facts through rx_operand, which
 * never re-derives them. Intermediates live in the call's arena (at most two
 * buffers per slot, reused across loop iterations) and are released by
 * rx_close. A copy out of a temporary that nothing reads afterwards is a
 * move (rx_move): the destination takes over the temporary's buffer. Result
 * slots are bound to Go's output buffers; a result whose final value sits in
 * an arena buffer is copied to its output once, by rx_close. Nothing survives
 * the call; there is no global state.
 *
 * Numerics are float32 throughout (built with -ffp-contract=off): tanhf,
 * expf, logf, sqrtf; reductions and MatMul accumulate in increasing index
 * order; Maximum/Minimum/Max propagate NaN; Argmax returns the first maximum
 * and the first NaN.
 */
#include "rx_runtime.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define RX_FN static __attribute__((unused))
/* RX_UNUSED marks generated scalar locals a program may set but never read. */
#define RX_UNUSED __attribute__((unused))

/* The checked type of a slot. dims[i] >= 0 is a constant size; a negative
 * entry -(k+1) is symbolic dimension k, bound on entry. */
typedef struct rx_type {
	int32_t dtype;
	int32_t rank;
	int64_t dims[RX_MAX_RANK];
} rx_type;

/* One value slot: its current data and facts. */
typedef struct rx_val {
	void *data;
	int64_t dims[RX_MAX_RANK];
	int64_t len;
	int32_t dtype, rank;
	int32_t trusted; /* facts stamped after validation */
	int32_t which;   /* the arena buffer in use */
	void *buf[2];    /* arena buffers (two, for ops that read their destination) */
	int64_t cap[2];
	void *out;       /* the Go output buffer, for result slots */
	const rx_type *type;
} rx_val;

/* The invocation context of one call. */
typedef struct rx_ctx {
	rx_arena *ar; /* the lent arena, or &own */
	rx_arena own;
	rx_val *v;
	int32_t nv, nin, nout, nsym;
	const rx_arg *args;
	rx_status *st;
	int64_t sym[RX_MAX_SYMS];
	int32_t symset[RX_MAX_SYMS];
} rx_ctx;

#define RX_TRY(e) do { if ((e) != RX_OK) goto rx_done; } while (0)

static int rx_fail(rx_ctx *c, int code, int64_t a, int64_t b, int64_t cc, int64_t d)
{
	rx_status *s = c->st;
	if (s->code == RX_OK) {
		s->code = code;
		s->a = a;
		s->b = b;
		s->c = cc;
		s->d = d;
	}
	return code;
}

static int64_t rx_dim_of(const rx_ctx *c, int64_t spec)
{
	return spec >= 0 ? spec : c->sym[-spec - 1];
}

/* rx_open starts a call: the prologue's first statement. */
RX_FN int rx_open(rx_ctx *c, const rx_arg *args, rx_status *st, rx_val *v, int32_t nv,
		  const rx_type *types, int32_t nin, int32_t nout, int32_t nsym)
{
	memset(c, 0, sizeof *c);
	memset(v, 0, sizeof(rx_val) * (size_t)(nv > 0 ? nv : 1));
	c->v = v;
	c->nv = nv;
	c->nin = nin;
	c->nout = nout;
	c->nsym = nsym;
	c->args = args;
	c->st = st;
	for (int32_t i = 0; i < nv; i++)
		v[i].type = &types[i];
	rx_arena *a = st->arena ? st->arena : &c->own;
	c->ar = a;
	a->used = 0;
	a->total = 0;
	a->chunks = NULL;
	if (a->cap < a->need) {
		/* The last call outgrew the block: replace it by one that holds
		 * everything (if that fails, this call uses overflow chunks). */
		free(a->block);
		a->cap = 0;
		a->block = aligned_alloc(64, (size_t)a->need);
		if (a->block)
			a->cap = a->need;
	}
	if (nsym > RX_MAX_SYMS)
		return rx_fail(c, RX_E_INTERNAL, RX_I_SHAPE, -1, 0, nsym);
	return RX_OK;
}

/* An overflow allocation: a header, then the buffer (64-byte aligned). */
typedef struct rx_chunk {
	struct rx_chunk *next;
	unsigned char pad[56];
} rx_chunk;

/* rx_alloc carves bytes from the call's arena: from the block when it has
 * room, else as an overflow chunk freed by rx_close. Buffers are 64-byte
 * aligned and followed by one spare cache line, so that buffers of a
 * power-of-two size do not all start at the same offset modulo 4096 (which
 * costs 4K-aliasing stalls when a kernel reads one and writes another). */
static void *rx_alloc(rx_ctx *c, size_t bytes)
{
	rx_arena *a = c->ar;
	size_t want = ((bytes + 63) & ~(size_t)63) + 64;
	a->total += (int64_t)want;
	if (a->block && a->cap - a->used >= (int64_t)want) {
		void *p = (unsigned char *)a->block + a->used;
		a->used += (int64_t)want;
		return p;
	}
	rx_chunk *k = aligned_alloc(64, sizeof(rx_chunk) + want);
	if (!k)
		return NULL;
	k->next = a->chunks;
	a->chunks = k;
	return k + 1;
}

/* rx_close ends a call: copies results whose final value sits in an arena
 * buffer to their output (once), gives every arena buffer back, frees the
 * overflow chunks (the next call's block will hold everything) and returns
 * the call's status code. */
RX_FN int rx_close(rx_ctx *c)
{
	rx_status *s = c->st;
	for (int32_t i = 0; i < c->nv; i++) {
		rx_val *x = &c->v[i];
		if (s->code == RX_OK && x->out && x->data && x->data != x->out)
			memcpy(x->out, x->data, (size_t)x->len * (x->dtype == RX_I64 ? 8u : 4u));
		for (int k = 0; k < 2; k++) {
			if (x->buf[k]) {
				x->buf[k] = NULL;
				s->arena_releases++;
			}
		}
		x->data = NULL;
	}
	rx_arena *a = c->ar;
	for (rx_chunk *k = a->chunks; k;) {
		rx_chunk *next = k->next;
		free(k);
		k = next;
	}
	a->chunks = NULL;
	if (a->total > a->need)
		a->need = a->total;
	a->used = 0;
	a->total = 0;
	if (a == &c->own)
		free(a->block);
	return (int)s->code;
}

/* rx_check_input validates input p on entry, exactly once, in the order of
 * Go's ir.BindInputs (well-formed, dtype, rank, dims left to right binding
 * symbols on first sight; then device and non-null data), and stamps the
 * facts of slot x trusted. */
RX_FN int rx_check_input(rx_ctx *c, int32_t p, rx_val *x)
{
	const rx_arg *a = &c->args[p];
	const rx_type *t = x->type;
	c->st->boundary_validations++;
	c->st->fact_queries++;
	if (a->count < 0)
		return rx_fail(c, RX_E_BOUNDARY, p, RX_B_MALFORMED, 0, 0);
	if (a->rank >= 0 && a->rank <= RX_MAX_RANK) {
		int64_t n = 1;
		for (int64_t i = 0; i < a->rank; i++) {
			if (a->dims[i] < 0)
				return rx_fail(c, RX_E_BOUNDARY, p, RX_B_MALFORMED, i, a->dims[i]);
			n *= a->dims[i];
		}
		if (n != a->count)
			return rx_fail(c, RX_E_BOUNDARY, p, RX_B_MALFORMED, 0, a->count);
	}
	if (a->dtype != t->dtype)
		return rx_fail(c, RX_E_BOUNDARY, p, RX_B_DTYPE, 0, a->dtype);
	if (a->rank != t->rank)
		return rx_fail(c, RX_E_BOUNDARY, p, RX_B_RANK, 0, a->rank);
	for (int32_t i = 0; i < t->rank; i++) {
		int64_t got = a->dims[i], spec = t->dims[i];
		if (spec >= 0) {
			if (got != spec)
				return rx_fail(c, RX_E_BOUNDARY, p, RX_B_DIM, i, got);
			continue;
		}
		int64_t k = -spec - 1;
		if (c->symset[k]) {
			if (c->sym[k] != got)
				return rx_fail(c, RX_E_BOUNDARY, p, RX_B_SYMDIM, i, got);
			continue;
		}
		c->sym[k] = got;
		c->symset[k] = 1;
	}
	if (a->device != 0)
		return rx_fail(c, RX_E_BOUNDARY, p, RX_B_DEVICE, 0, a->device);
	if (a->data == NULL && a->count > 0)
		return rx_fail(c, RX_E_BOUNDARY, p, RX_B_NULL, 0, 0);
	x->data = a->data;
	x->dtype = t->dtype;
	x->rank = t->rank;
	x->len = a->count;
	for (int32_t i = 0; i < t->rank; i++)
		x->dims[i] = a->dims[i];
	x->trusted = 1;
	return RX_OK;
}

/* rx_bind_output attaches output o (Go's buffer) to result slot x after
 * checking that Go sized it from the checked shape. */
RX_FN int rx_bind_output(rx_ctx *c, int32_t o, rx_val *x)
{
	const rx_arg *a = &c->args[c->nin + o];
	const rx_type *t = x->type;
	int64_t n = 1;
	if (a->dtype != t->dtype || a->rank != t->rank)
		return rx_fail(c, RX_E_INTERNAL, RX_I_OUTPUT, o, -1, a->rank);
	for (int32_t i = 0; i < t->rank; i++) {
		if (a->dims[i] != rx_dim_of(c, t->dims[i]))
			return rx_fail(c, RX_E_INTERNAL, RX_I_OUTPUT, o, i, a->dims[i]);
		n *= a->dims[i];
	}
	if (n != a->count || (n > 0 && a->data == NULL))
		return rx_fail(c, RX_E_INTERNAL, RX_I_OUTPUT, o, -1, a->count);
	x->out = a->data;
	return RX_OK;
}

/* rx_operand returns the trusted facts of an operand. Facts are never
 * re-derived: reading a slot that was not stamped is an internal error and
 * is counted as a re-query. */
static inline const rx_val *rx_operand(rx_ctx *c, const rx_val *x)
{
	if (!x->trusted) {
		c->st->fact_requeries++;
		rx_fail(c, RX_E_INTERNAL, RX_I_UNTRUSTED, x - c->v, 0, 0);
		return NULL;
	}
	return x;
}

/* rx_out prepares slot d to receive a result of the given dtype and dims and
 * returns where to write it: the Go output buffer for a result slot, else
 * the slot's arena buffer. fresh asks for a buffer other than the slot's
 * current data (the op reads its own destination). The facts are set but
 * not trusted until rx_result validates them. */
static void *rx_out(rx_ctx *c, rx_val *d, int32_t dtype, int32_t rank, const int64_t *dims, int fresh)
{
	int64_t n = 1;
	for (int32_t i = 0; i < rank; i++)
		n *= dims[i];
	size_t bytes = (size_t)n * (dtype == RX_I64 ? 8u : 4u);
	void *p;
	if (d->out && !fresh) {
		p = d->out;
	} else {
		int w = d->which;
		if (fresh && d->buf[w] != NULL && d->buf[w] == d->data)
			w ^= 1;
		if (d->buf[w] == NULL || d->cap[w] < (int64_t)bytes) {
			if (d->buf[w]) {
				/* Too small: given back (its bytes stay carved until the
				 * call ends). */
				d->buf[w] = NULL;
				c->st->arena_releases++;
			}
			d->buf[w] = rx_alloc(c, bytes);
			if (!d->buf[w]) {
				rx_fail(c, RX_E_NOMEM, (int64_t)bytes, 0, 0, 0);
				return NULL;
			}
			c->st->arena_allocs++;
			d->cap[w] = (int64_t)bytes;
		}
		d->which = w;
		p = d->buf[w];
	}
	d->data = p;
	d->dtype = dtype;
	d->rank = rank;
	d->len = n;
	for (int32_t i = 0; i < rank; i++)
		d->dims[i] = dims[i];
	d->trusted = 0;
	return p;
}

/* rx_result validates a freshly written result against its checked type and
 * stamps its facts trusted. */
static int rx_result(rx_ctx *c, rx_val *d)
{
	const rx_type *t = d->type;
	int64_t n = 1;
	c->st->result_validations++;
	c->st->fact_queries++;
	if (d->dtype != t->dtype || d->rank != t->rank)
		return rx_fail(c, RX_E_INTERNAL, RX_I_RESULT, d - c->v, -1, d->rank);
	for (int32_t i = 0; i < t->rank; i++) {
		if (d->dims[i] != rx_dim_of(c, t->dims[i]))
			return rx_fail(c, RX_E_INTERNAL, RX_I_RESULT, d - c->v, i, d->dims[i]);
		n *= d->dims[i];
	}
	if (n != d->len || d->data == NULL)
		return rx_fail(c, RX_E_INTERNAL, RX_I_RESULT, d - c->v, -1, d->len);
	d->trusted = 1;
	return RX_OK;
}

/* ---- scalar helpers ---------------------------------------------------- */

/* Wrapping int64 arithmetic without undefined behaviour. */
static inline int64_t rx_iadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t rx_isub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline int64_t rx_imul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static inline int64_t rx_ineg(int64_t a) { return (int64_t)(0u - (uint64_t)a); }

/* CheckedDiv: Go's truncating division; zero divisor and INT64_MIN / -1 fail. */
RX_FN int rx_checked_div(rx_ctx *c, int32_t site, int64_t a, int64_t b, int64_t *out)
{
	if (b == 0 || (a == INT64_MIN && b == -1))
		return rx_fail(c, RX_E_CHECKED, site, a, b, 0);
	*out = a / b;
	return RX_OK;
}

/* CheckedRem: Go's remainder (sign of a); zero divisor fails; x % -1 == 0. */
RX_FN int rx_checked_rem(rx_ctx *c, int32_t site, int64_t a, int64_t b, int64_t *out)
{
	if (b == 0)
		return rx_fail(c, RX_E_CHECKED, site, a, b, 0);
	*out = b == -1 ? 0 : a % b;
	return RX_OK;
}

/* rx_scalar_i64 reads a validated rank-0 int64 input. */
RX_FN int64_t rx_scalar_i64(const rx_val *x) { return *(const int64_t *)x->data; }

/* rx_store_i64 writes an int64 scalar result to its output buffer. */
RX_FN int rx_store_i64(rx_ctx *c, rx_val *d, int64_t v)
{
	int64_t *p = rx_out(c, d, RX_I64, 0, NULL, 0);
	if (!p)
		return c->st->code;
	*p = v;
	return rx_result(c, d);
}

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

/* ---- elementwise ------------------------------------------------------- */

RX_FN int rx_const_f(rx_ctx *c, rx_val *d, float v)
{
	float *o = rx_out(c, d, RX_F32, 0, NULL, 0);
	if (!o)
		return c->st->code;
	o[0] = v;
	return rx_result(c, d);
}

RX_FN int rx_copy(rx_ctx *c, rx_val *d, rx_val *s)
{
	const rx_val *S = rx_operand(c, s);
	if (!S)
		return c->st->code;
	const void *src = S->data;
	int32_t dtype = S->dtype, rank = S->rank;
	int64_t dims[RX_MAX_RANK], n = S->len;
	for (int32_t i = 0; i < rank; i++)
		dims[i] = S->dims[i];
	void *o = rx_out(c, d, dtype, rank, dims, 0);
	if (!o)
		return c->st->code;
	if (o != src && n > 0)
		memmove(o, src, (size_t)n * (dtype == RX_I64 ? 8u : 4u));
	return rx_result(c, d);
}

/* rx_move is a copy out of a temporary s that nothing reads before its next
 * write: d takes over s's arena buffers (and s d's), so the value moves by a
 * pointer and no buffer is shared. The result is validated like any other.
 * A source outside its own arena buffer is copied. */
RX_FN int rx_move(rx_ctx *c, rx_val *d, rx_val *s)
{
	const rx_val *S = rx_operand(c, s);
	if (!S)
		return c->st->code;
	if (d == s || s->out || s->data == NULL || s->data != s->buf[s->which])
		return rx_copy(c, d, s);
	for (int k = 0; k < 2; k++) {
		void *b = d->buf[k];
		int64_t n = d->cap[k];
		d->buf[k] = s->buf[k];
		d->cap[k] = s->cap[k];
		s->buf[k] = b;
		s->cap[k] = n;
	}
	int32_t w = d->which;
	d->which = s->which;
	s->which = w;
	d->data = s->data;
	d->dtype = s->dtype;
	d->rank = s->rank;
	d->len = s->len;
	for (int32_t i = 0; i < s->rank; i++)
		d->dims[i] = s->dims[i];
	d->trusted = 0;
	s->data = NULL;
	s->trusted = 0;
	return rx_result(c, d);
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
