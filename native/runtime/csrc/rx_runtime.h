/*
 * rx_runtime.h: the C API of rxeq's runtimes. It is the ABI between the Go
 * call bridge (package native), the C code rxeq generates, and the runtime
 * library that code is linked against. Two libraries implement it: rxeq's
 * own kernels (rx_context.c + rx_kernels.c, executor "native") and the
 * kernels of libtorch's ATen (rx_context.c + rx_aten.cc, executor "torch").
 * A generated translation unit includes this header and nothing else, so it
 * is byte-identical for both runtimes.
 *
 * A generated function has the type rx_entry: it receives one rx_arg per
 * parameter followed by one rx_arg per result (the output buffers, allocated
 * by Go from the checked output shapes), and an rx_status that it fills with
 * the outcome of the call and the call's counters. It returns status->code.
 */
#ifndef RX_RUNTIME_H
#define RX_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The highest rank the native backend supports. */
#define RX_MAX_RANK 4
/* The most symbolic dimensions one function may bind. */
#define RX_MAX_SYMS 16

/* Element types: the same numbers as Go's tensor.DType. */
enum { RX_INVALID = 0, RX_F32 = 1, RX_F64 = 2, RX_I64 = 3 };

/* One tensor crossing the boundary. data points into Go memory (pinned for
 * the call); count is the number of elements the data holds (-1 when the Go
 * tensor is malformed in a way C cannot see); device 0 is "cpu:0". */
typedef struct rx_arg {
	void *data;
	int64_t count;
	int64_t dtype;
	int64_t rank;
	int64_t device;
	int64_t dims[RX_MAX_RANK];
} rx_arg;

/* Status codes (rx_status.code). */
enum {
	RX_OK = 0,
	RX_E_BOUNDARY = 1, /* a = param, b = boundary code, c = dim, d = got */
	RX_E_CHECKED = 2,  /* a = site, b = lhs, c = rhs */
	RX_E_NOMEM = 3,    /* a = bytes requested */
	RX_E_INTERNAL = 4, /* a = RX_I_* kind, b = slot, c = dim, d = got */
	RX_E_SIZE = 5,     /* a = slot, b = dim index where the count overflowed */
	RX_E_KERNEL = 6    /* a = RX_K_* op; the framework kernel failed (torch) */
};

/* Boundary codes: 1..6 are Go's ir.Boundary* codes; RX_B_MALFORMED means the
 * tensor itself is malformed (Go formats it with tensor.Validate). */
enum {
	RX_B_DTYPE = 1,
	RX_B_RANK = 2,
	RX_B_DIM = 3,
	RX_B_SYMDIM = 4,
	RX_B_DEVICE = 5,
	RX_B_NULL = 6,
	RX_B_MALFORMED = 100
};

/* Internal error kinds (RX_E_INTERNAL): a bug in rxeq, never in a program. */
enum {
	RX_I_RESULT = 1,   /* an op result failed validation */
	RX_I_UNTRUSTED = 2,/* an op read an operand whose facts were never stamped */
	RX_I_OUTPUT = 3,   /* an output buffer does not match its checked shape */
	RX_I_SHAPE = 4     /* operand shapes do not fit the op */
};

/* The arena of one call: C memory that the Go side owns (a pool per
 * Program) and lends to one call at a time. The call carves its
 * intermediates out of block (bump allocation); what does not fit is
 * malloc'd separately and freed when the call ends, and the next call then
 * finds a block big enough for everything (so a steady stream of calls
 * allocates, and faults in, nothing). Contents never survive a call: every
 * buffer is written by its op before it is read. Fields are private to
 * rx_runtime.c; Go allocates the struct zeroed (calloc) and frees it with
 * rx_arena_free. */
typedef struct rx_arena {
	void *block;   /* the block (64-byte aligned), or NULL */
	int64_t cap;   /* its size in bytes */
	int64_t used;  /* bytes carved from it by the running call */
	int64_t need;  /* bytes the largest call so far asked for */
	int64_t total; /* bytes the running call asked for */
	void *chunks;  /* the running call's overflow allocations (a list) */
} rx_arena;

/* The frame of one call: in, the arena lent to it (NULL: the call mallocs
 * and frees its own) and the call's row tiles (tile_rows 0: none); out,
 * the outcome and the counters. Go allocates it, zeroed. */
typedef struct rx_status {
	rx_arena *arena;
	/* Row tiles (native/tile.go says when Go asks for them): the body of
	 * the generated function runs once per tile of tile_rows rows of the
	 * batch symbol tile_sym, inside the call's one context, with every
	 * argument i whose bit is set in tile_mask (its dim 0 is the batch)
	 * narrowed to the tile. 0 rows: the body runs once. */
	int64_t tile_rows, tile_sym;
	uint64_t tile_mask;
	int64_t code, a, b, c, d;
	int64_t boundary_validations; /* inputs validated on entry */
	int64_t result_validations;   /* op results validated before stamping */
	int64_t fact_queries;         /* facts derived from raw data (validations) */
	int64_t fact_requeries;       /* facts asked for again after stamping: must stay 0 */
	int64_t arena_allocs;         /* arena buffers handed to slots */
	int64_t arena_releases;       /* arena buffers given back (all, by rx_close) */
	int64_t kernel_calls;         /* framework kernel calls (torch; 0 for native) */
	int64_t trusted_reuses;       /* operand facts read from a stamped slot */
	int64_t tiles;                /* passes of the body: 1, or one per row tile */
	/* In: the instruction set of the call's kernels, k+1 for ISA k (0
	 * plain C, 1 SSE2, 2 AVX2, 3 AVX-512), at most the library's widest;
	 * 0 for the widest. Out: the ISA they ran at, plus one (0: a runtime
	 * without ISAs, torch). */
	int64_t isa_cap, isa;
} rx_status;

/* rx_arena_free frees an arena that no call is using, and its block. */
static inline void rx_arena_free(rx_arena *a)
{
	if (a) {
		free(a->block);
		free(a);
	}
}

/* The type of every generated function. */
typedef int (*rx_entry)(const rx_arg *args, rx_status *status);

/* ---- what generated code calls ----------------------------------------
 * Everything below is the surface a generated function uses: the context
 * and slot types (generated code allocates them on its stack), and the
 * runtime functions, each returning RX_OK or the status code it set. */

/* RX_UNUSED marks generated scalar locals a program may set but never read. */
#define RX_UNUSED __attribute__((unused))
/* RX_TRY jumps to the epilogue at the first failed runtime call. */
#define RX_TRY(e) do { if ((e) != RX_OK) goto rx_done; } while (0)

/* The checked type of a slot. dims[i] >= 0 is a constant size; a negative
 * entry -(k+1) is symbolic dimension k, bound on entry. */
typedef struct rx_type {
	int32_t dtype;
	int32_t rank;
	int64_t dims[RX_MAX_RANK];
} rx_type;

/* One value slot: its current data and facts. Fields are the runtime's. */
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

/* The most arguments (inputs and outputs) of a function whose calls may
 * run in row tiles. */
#define RX_MAX_TILE_ARGS 64

/* The invocation context of one call. Fields are the runtime's. */
typedef struct rx_ctx {
	rx_arena *ar; /* the lent arena, or &own */
	rx_arena own;
	rx_val *v;
	int32_t nv, nin, nout, nsym;
	const rx_arg *args;
	rx_status *st;
	int64_t sym[RX_MAX_SYMS];
	int32_t symset[RX_MAX_SYMS];
	/* Row tiles (rx_tile): rows per tile (0: none), the batch's rows, the
	 * first row of the running tile and its rows, the batch symbol, the
	 * passes of the body so far, the tiled arguments, and the slot of
	 * every argument (set by rx_check_input and rx_bind_output). */
	int64_t tile, rows, r0, m;
	int32_t tsym, pass;
	uint64_t tmask;
	rx_val *argv[RX_MAX_TILE_ARGS];
} rx_ctx;

/* Context (rx_context.c, shared by both runtimes). */
int rx_open(rx_ctx *c, const rx_arg *args, rx_status *st, rx_val *v, int32_t nv,
	    const rx_type *types, int32_t nin, int32_t nout, int32_t nsym);
int rx_close(rx_ctx *c);
int rx_check_input(rx_ctx *c, int32_t p, rx_val *x);
int rx_bind_output(rx_ctx *c, int32_t o, rx_val *x);
/* rx_tile starts the next pass of the function's body, after the inputs
 * were validated and the outputs bound: it returns 1 once when the call is
 * not tiled, else once per row tile (with the tiled arguments' slots and
 * the batch symbol narrowed to the tile, and the previous tile's results
 * in their outputs), then 0. The generated body is `while (rx_tile(&rx_c))
 * { ... }`. */
int rx_tile(rx_ctx *c);
int rx_copy(rx_ctx *c, rx_val *d, rx_val *s);
int rx_move(rx_ctx *c, rx_val *d, rx_val *s);

/* Integer scalars (rx_context.c): control flow never calls a kernel. */
int rx_checked_div(rx_ctx *c, int32_t site, int64_t a, int64_t b, int64_t *out);
int rx_checked_rem(rx_ctx *c, int32_t site, int64_t a, int64_t b, int64_t *out);
int64_t rx_scalar_i64(const rx_val *x);
int rx_store_i64(rx_ctx *c, rx_val *d, int64_t v);

/* Wrapping int64 arithmetic without undefined behaviour. */
static inline int64_t rx_iadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t rx_isub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline int64_t rx_imul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static inline int64_t rx_ineg(int64_t a) { return (int64_t)(0u - (uint64_t)a); }

/* RX_INF is float32 +Inf, for a literal that rounds to it (-RX_INF for
 * -Inf): generated code includes no <math.h>, whose INFINITY it would
 * need, so it is made from its bits (any C11 compiler, tcc included). */
static inline float rx_f32_from_bits(uint32_t u)
{
	union {
		uint32_t u;
		float f;
	} v = {u};
	return v.f;
}
#define RX_INF rx_f32_from_bits(0x7f800000u)

/* A float32 scalar constant (rx_context.c: a store, not a kernel). */
int rx_const_f(rx_ctx *c, rx_val *d, float v);

/* Float kernels (rx_kernels.c for native, rx_aten.cc for torch). */
int rx_add(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b);
int rx_sub(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b);
int rx_mul(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b);
int rx_div(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b);
int rx_maximum(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b);
int rx_minimum(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b);
int rx_neg(rx_ctx *c, rx_val *d, rx_val *a);
int rx_tanh(rx_ctx *c, rx_val *d, rx_val *a);
int rx_exp(rx_ctx *c, rx_val *d, rx_val *a);
int rx_log(rx_ctx *c, rx_val *d, rx_val *a);
int rx_sigmoid(rx_ctx *c, rx_val *d, rx_val *a);
int rx_relu(rx_ctx *c, rx_val *d, rx_val *a);
int rx_abs(rx_ctx *c, rx_val *d, rx_val *a);
int rx_sqrt(rx_ctx *c, rx_val *d, rx_val *a);
int rx_matmul(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b);
int rx_transpose(rx_ctx *c, rx_val *d, rx_val *a);

/* Fused MatMul (codegen emits them for the patterns below; see native/gen.go).
 * Each computes, bit for bit, what the ops it replaces compute one by one,
 * and validates and counts every result those ops would have validated;
 * the slots of the intermediates it skips (t, m) are named so that their
 * checked types are validated, and may be left unwritten (nothing else
 * reads them). The torch runtime runs the replaced ops themselves, through
 * those slots.
 *   rx_matmul_bt:      t = Transpose(b); d = MatMul(a, t)
 *   rx_matmul_bias:    m = MatMul(a, b); d = m + bias  (bias rank 1, [N])
 *   rx_matmul_bt_bias: t = Transpose(b); m = MatMul(a, t); d = m + bias
 *   rx_matmul_bias_tanh, rx_matmul_bt_bias_tanh: the same with s = m + bias
 *                      and d = Tanh(s) */
int rx_matmul_bt(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *t);
int rx_matmul_bias(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *bias, rx_val *m);
int rx_matmul_bt_bias(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *bias, rx_val *t, rx_val *m);
int rx_matmul_bias_tanh(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *bias, rx_val *m, rx_val *s);
int rx_matmul_bt_bias_tanh(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *bias, rx_val *t, rx_val *m,
			   rx_val *s);


/* A fused pair of broadcasting elementwise ops (codegen emits it for
 * `t = op1(a, b); d = op2(t, cc)` with t read by nothing else and a, t and
 * d of one shape; see native/gen.go): the bits of the two ops one by one.
 * t is the slot of the skipped intermediate, validated and counted as in
 * the fused MatMul above; the torch runtime runs both ops through it. */
enum { RX_EW_ADD = 1, RX_EW_SUB = 2, RX_EW_MUL = 3, RX_EW_DIV = 4 };
int rx_ew2(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, int32_t op1, rx_val *cc, int32_t op2, rx_val *t);
/* rx_ew_const: t = k (rx_const_f); d = op(a, t), with t skipped likewise. */
int rx_ew_const(rx_ctx *c, rx_val *d, rx_val *a, int32_t op, float k, rx_val *t);

int rx_softmax(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis);
int rx_logsoftmax(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis);
int rx_sum(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis, int keep);
int rx_mean(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis, int keep);
int rx_max(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis, int keep);
int rx_argmax(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis);
/* rx_argmax_keep: rx_argmax with the axis kept with size 1 (Argmax(x, axis, true)). */
int rx_argmax_keep(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis);
int rx_argmax_scalar(rx_ctx *c, rx_val *a, int32_t axis, int64_t *out);

#ifdef __cplusplus
}
#endif

#endif
