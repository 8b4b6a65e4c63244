/*
 * rx_internal.h: what the kernels of either runtime share with the
 * invocation context (rx_context.c): failing a call, reading an operand's
 * trusted facts, preparing a result slot and stamping it trusted. Not part
 * of the API generated code sees; every name here is hidden in the built
 * library.
 */
#ifndef RX_INTERNAL_H
#define RX_INTERNAL_H

#include "rx_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RX_HIDDEN __attribute__((visibility("hidden")))

/* rx_fail records the call's first error (later ones are dropped) and
 * returns code. */
RX_HIDDEN int rx_fail(rx_ctx *c, int code, int64_t a, int64_t b, int64_t cc, int64_t d);

/* rx_untrusted is rx_operand's failure: it counts the re-query, fails
 * the call with RX_I_UNTRUSTED and returns NULL. */
RX_HIDDEN const rx_val *rx_untrusted(rx_ctx *c, const rx_val *x);

/* rx_grow gives d's buffer w back when it has one (too small) and puts a
 * new arena buffer of bytes in its place, counting both; it returns the
 * buffer, or NULL with RX_E_NOMEM set. */
RX_HIDDEN void *rx_grow(rx_ctx *c, rx_val *d, int32_t w, int64_t bytes);

/* rx_result_fail reports why result d failed rx_result's validation,
 * the first failure in rx_result's order, and returns the status code. */
RX_HIDDEN int rx_result_fail(rx_ctx *c, rx_val *d);

/* The op plumbing below runs for every op of every call: it is inline, so
 * that a kernel pays no call for it and its failures stay out of line. */

/* rx_count multiplies dims into *n with overflow checks; it returns the
 * index of the dim at which the count overflowed int64 (or that is
 * negative), or -1. */
static inline int32_t rx_count(int32_t rank, const int64_t *dims, int64_t *n)
{
	int64_t k = 1;
	for (int32_t i = 0; i < rank; i++) {
		if (dims[i] < 0 || __builtin_mul_overflow(k, dims[i], &k))
			return i;
	}
	*n = k;
	return -1;
}

/* rx_bytes returns n elements of dtype in bytes plus the arena's padding,
 * or -1 when that does not fit in int64. */
static inline int64_t rx_bytes(int64_t n, int32_t dtype)
{
	int64_t b;
	if (n < 0 || __builtin_mul_overflow(n, (int64_t)(dtype == RX_I64 ? 8 : 4), &b) ||
	    __builtin_add_overflow(b, (int64_t)128, &b))
		return -1;
	return b;
}

/* rx_dim_of resolves a checked dim spec (>= 0 a size, -(k+1) symbol k). */
static inline int64_t rx_dim_of(const rx_ctx *c, int64_t spec)
{
	return spec >= 0 ? spec : c->sym[-spec - 1];
}

/* rx_operand returns the trusted facts of an operand. Facts are never
 * re-derived: reading a slot that was not stamped is an internal error and
 * is counted as a re-query (rx_untrusted), and returns NULL. */
static inline const rx_val *rx_operand(rx_ctx *c, const rx_val *x)
{
	if (__builtin_expect(!x->trusted, 0))
		return rx_untrusted(c, x);
	c->st->trusted_reuses++;
	return x;
}

/* rx_out prepares slot d to receive a result of the given dtype and dims and
 * returns where to write it: the Go output buffer for a result slot, else
 * the slot's arena buffer (NULL with the status set on failure: a size
 * that overflows, or no memory). fresh asks for a buffer other than the
 * slot's current data (the op reads its own destination). The facts are
 * set but not trusted until rx_result validates them. */
static inline void *rx_out(rx_ctx *c, rx_val *d, int32_t dtype, int32_t rank, const int64_t *dims, int fresh)
{
	int64_t n;
	int32_t bad = rx_count(rank, dims, &n);
	if (__builtin_expect(bad >= 0, 0)) {
		rx_fail(c, RX_E_SIZE, d - c->v, bad, 0, 0);
		return NULL;
	}
	if (__builtin_expect(rx_bytes(n, dtype) < 0, 0)) {
		rx_fail(c, RX_E_SIZE, d - c->v, rank, 0, 0);
		return NULL;
	}
	int64_t bytes = n * (dtype == RX_I64 ? 8 : 4);
	void *p;
	if (d->out && !fresh) {
		p = d->out;
	} else {
		int32_t w = d->which;
		if (fresh && d->buf[w] != NULL && d->buf[w] == d->data)
			w ^= 1;
		p = d->buf[w];
		if (__builtin_expect(p == NULL || d->cap[w] < bytes, 0)) {
			p = rx_grow(c, d, w, bytes);
			if (!p)
				return NULL;
		}
		d->which = w;
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

/* rx_result validates a freshly written result against its checked type
 * (dtype, rank, each dim, the element count, non-null data) and stamps
 * its facts trusted; a failure is reported by rx_result_fail. */
static inline int rx_result(rx_ctx *c, rx_val *d)
{
	const rx_type *t = d->type;
	rx_status *s = c->st;
	s->result_validations++;
	s->fact_queries++;
	int64_t n = 1;
	bool ok = d->dtype == t->dtype && d->rank == t->rank && d->data != NULL;
	for (int32_t i = 0; ok && i < t->rank; i++)
		ok = d->dims[i] == rx_dim_of(c, t->dims[i]) && !__builtin_mul_overflow(n, d->dims[i], &n);
	if (__builtin_expect(!ok || n != d->len, 0))
		return rx_result_fail(c, d);
	d->trusted = 1;
	return RX_OK;
}

#ifdef __cplusplus
}
#endif

#endif
