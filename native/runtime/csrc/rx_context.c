/*
 * rx_context.c: the invocation context of rxeq's runtimes, shared by both
 * implementations of rx_runtime.h (rxeq's own kernels in rx_kernels.c and
 * libtorch's in rx_aten.cc): opening and closing a call, the arena, the
 * boundary validation of inputs, result validation, copies and moves, and
 * the checked integer scalar ops that control flow uses. It is compiled
 * once into each runtime library; generated code links against it.
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
 * Every element count and byte size is computed with overflow checks
 * (rx_count): a shape whose size does not fit in int64 fails the call with
 * RX_E_SIZE, never wraps.
 */
#include "rx_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define RX_FN

int rx_fail(rx_ctx *c, int code, int64_t a, int64_t b, int64_t cc, int64_t d)
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

/* rx_kernels_select (rx_kernels.c) chooses the call's kernels from
 * st->isa_cap; a runtime without ISAs (torch) does not define it. */
extern void rx_kernels_select(rx_status *st) __attribute__((weak));

/* rx_open starts a call: the prologue's first statement. */
RX_FN int rx_open(rx_ctx *c, const rx_arg *args, rx_status *st, rx_val *v, int32_t nv,
		  const rx_type *types, int32_t nin, int32_t nout, int32_t nsym)
{
	/* Not a memset of the context (rep stos costs more than these
	 * stores): every field that is read is set here, own below when it
	 * is used. */
	c->v = v;
	c->nv = nv;
	c->nin = nin;
	c->nout = nout;
	c->nsym = nsym;
	c->args = args;
	c->st = st;
	st->isa = 0;
	if (rx_kernels_select)
		rx_kernels_select(st);
	/* Every slot starts empty and untrusted, with no buffers and no
	 * output; its dims are written with its first value (a slot's dims
	 * are read only after that, rank of them). */
	for (int32_t i = 0; i < nv; i++) {
		rx_val *x = &v[i];
		x->data = NULL;
		x->len = 0;
		x->dtype = 0;
		x->rank = 0;
		x->trusted = 0;
		x->which = 0;
		x->buf[0] = x->buf[1] = NULL;
		x->cap[0] = x->cap[1] = 0;
		x->out = NULL;
		x->type = &types[i];
	}
	/* The function's symbols start unbound; sym[k] is read only once
	 * symset[k] is set (every symbol occurs in a parameter, so inputs
	 * that pass bind them all). */
	for (int32_t k = 0; k < nsym && k < RX_MAX_SYMS; k++)
		c->symset[k] = 0;
	/* Row tiles, when the caller asked for them and can have them. */
	c->pass = 0;
	c->tile = 0;
	if (st->tile_rows > 0 && nin + nout <= RX_MAX_TILE_ARGS && st->tile_sym >= 0 && st->tile_sym < nsym &&
	    st->tile_sym < RX_MAX_SYMS) {
		c->tile = st->tile_rows;
		c->tsym = (int32_t)st->tile_sym;
		c->tmask = st->tile_mask;
	}
	rx_arena *a = st->arena;
	if (!a) {
		a = &c->own;
		a->block = NULL;
		a->cap = a->need = 0;
	}
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
	if (want < bytes || want > (size_t)INT64_MAX - (size_t)(a->total > 0 ? a->total : 0))
		return NULL;
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
	int64_t held = 0;
	for (int32_t i = 0; i < c->nv; i++) {
		rx_val *x = &c->v[i];
		if (s->code == RX_OK && x->out && x->data && x->data != x->out)
			memcpy(x->out, x->data, (size_t)x->len * (x->dtype == RX_I64 ? 8u : 4u));
		/* Every arena buffer a slot holds is given back. The slots die
		 * with the generated function's frame: nothing reads them after
		 * this, so they are counted, not cleared. */
		held += (x->buf[0] != NULL) + (x->buf[1] != NULL);
	}
	s->arena_releases += held;
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
			if (a->dims[i] < 0 || __builtin_mul_overflow(n, a->dims[i], &n))
				return rx_fail(c, RX_E_BOUNDARY, p, RX_B_MALFORMED, i, a->dims[i]);
		}
		if (n != a->count || rx_bytes(n, RX_F32) < 0)
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
	if (p < RX_MAX_TILE_ARGS)
		c->argv[p] = x;
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
		if (__builtin_mul_overflow(n, a->dims[i], &n))
			return rx_fail(c, RX_E_SIZE, x - c->v, i, 0, 0);
	}
	if (n != a->count || (n > 0 && a->data == NULL))
		return rx_fail(c, RX_E_INTERNAL, RX_I_OUTPUT, o, -1, a->count);
	x->out = a->data;
	if (c->nin + o < RX_MAX_TILE_ARGS)
		c->argv[c->nin + o] = x;
	return RX_OK;
}

/* rx_tile_arg narrows argument i's data to the running tile when it is a
 * tiled argument (its dim 0 is the batch), else returns it whole; *per is
 * the elements per row of a tiled argument. */
static void *rx_tile_arg(rx_ctx *c, int32_t i, int64_t *per)
{
	const rx_arg *a = &c->args[i];
	*per = 0;
	if (!(c->tmask >> i & 1) || a->data == NULL)
		return a->data;
	*per = a->count / c->rows;
	return (unsigned char *)a->data + c->r0 * *per * (a->dtype == RX_F32 ? 4 : 8);
}

/* rx_tile: see rx_runtime.h. A tile's pass sees what an invocation on the
 * tile's rows alone would see: every input slot holds its (narrowed)
 * validated facts again, trusted without being validated again; every
 * other slot starts empty and untrusted (keeping its arena buffers, as a
 * loop's iterations do); the batch symbol is the tile's rows, and each
 * result slot is bound to its output's rows of the tile. Between tiles,
 * the results whose value sits in an arena buffer are copied to their
 * outputs (rx_close copies the last tile's). */
RX_FN int rx_tile(rx_ctx *c)
{
	if (c->pass == 0 && c->tile > 0 && c->sym[c->tsym] <= c->tile)
		c->tile = 0; /* one tile: the call as it is */
	if (c->tile <= 0) {
		if (c->pass > 0)
			return 0;
		c->pass = 1;
		c->st->tiles++;
		return 1;
	}
	int32_t nin = c->nin, nargs = c->nin + c->nout;
	if (c->pass == 0) {
		c->rows = c->sym[c->tsym];
		c->r0 = 0;
		c->m = 0;
	} else {
		for (int32_t i = nin; i < nargs; i++) {
			rx_val *x = c->argv[i];
			if (x->out && x->data && x->data != x->out)
				memcpy(x->out, x->data, (size_t)x->len * (x->dtype == RX_I64 ? 8u : 4u));
		}
		c->r0 += c->m;
	}
	if (c->r0 >= c->rows)
		return 0;
	c->m = c->rows - c->r0 < c->tile ? c->rows - c->r0 : c->tile;
	c->pass++;
	c->st->tiles++;
	c->sym[c->tsym] = c->m;
	for (int32_t i = 0; i < c->nv; i++) {
		c->v[i].data = NULL;
		c->v[i].trusted = 0;
	}
	for (int32_t i = 0; i < nin; i++) {
		const rx_arg *a = &c->args[i];
		rx_val *x = c->argv[i];
		int64_t per;
		x->data = rx_tile_arg(c, i, &per);
		x->dtype = (int32_t)a->dtype;
		x->rank = (int32_t)a->rank;
		x->len = a->count;
		for (int32_t d = 0; d < x->rank; d++)
			x->dims[d] = a->dims[d];
		if (c->tmask >> i & 1) {
			x->dims[0] = c->m;
			x->len = c->m * per;
		}
		x->trusted = 1;
	}
	for (int32_t i = nin; i < nargs; i++) {
		int64_t per;
		c->argv[i]->out = rx_tile_arg(c, i, &per);
	}
	return 1;
}

/* rx_untrusted: see rx_internal.h (rx_operand's failure). */
const rx_val *rx_untrusted(rx_ctx *c, const rx_val *x)
{
	c->st->fact_requeries++;
	rx_fail(c, RX_E_INTERNAL, RX_I_UNTRUSTED, x - c->v, 0, 0);
	return NULL;
}

/* rx_grow: see rx_internal.h (rx_out's allocation). */
void *rx_grow(rx_ctx *c, rx_val *d, int32_t w, int64_t bytes)
{
	if (d->buf[w]) {
		/* Too small: given back (its bytes stay carved until the call
		 * ends). */
		d->buf[w] = NULL;
		c->st->arena_releases++;
	}
	d->buf[w] = rx_alloc(c, (size_t)bytes);
	if (!d->buf[w]) {
		rx_fail(c, RX_E_NOMEM, bytes, 0, 0, 0);
		return NULL;
	}
	c->st->arena_allocs++;
	d->cap[w] = bytes;
	return d->buf[w];
}

/* rx_result_fail: see rx_internal.h; the checks of rx_result in order,
 * for the report. */
int rx_result_fail(rx_ctx *c, rx_val *d)
{
	const rx_type *t = d->type;
	int64_t n = 1;
	if (d->dtype != t->dtype || d->rank != t->rank)
		return rx_fail(c, RX_E_INTERNAL, RX_I_RESULT, d - c->v, -1, d->rank);
	for (int32_t i = 0; i < t->rank; i++) {
		if (d->dims[i] != rx_dim_of(c, t->dims[i]))
			return rx_fail(c, RX_E_INTERNAL, RX_I_RESULT, d - c->v, i, d->dims[i]);
		if (__builtin_mul_overflow(n, d->dims[i], &n))
			return rx_fail(c, RX_E_SIZE, d - c->v, i, 0, 0);
	}
	return rx_fail(c, RX_E_INTERNAL, RX_I_RESULT, d - c->v, -1, d->len);
}

/* ---- scalar helpers ---------------------------------------------------- */

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

/* ---- constants, copies and moves ----------------------------------------- */

/* rx_const_f writes a float32 scalar constant (no kernel: a store). */

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

