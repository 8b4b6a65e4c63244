/*
 * rx_runtime.h: the ABI between rxeq's Go call bridge (package native) and
 * the C code it generates. It is included by the cgo preamble of package
 * native and by every generated translation unit (through rx_runtime.c).
 *
 * A generated function has the type rx_entry: it receives one rx_arg per
 * parameter followed by one rx_arg per result (the output buffers, allocated
 * by Go from the checked output shapes), and an rx_status that it fills with
 * the outcome of the call and the call's counters. It returns status->code.
 */
#ifndef RX_RUNTIME_H
#define RX_RUNTIME_H

#include <stdint.h>
#include <stdlib.h>

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
	RX_E_INTERNAL = 4  /* a = RX_I_* kind, b = slot, c = dim, d = got */
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
 * and frees its own); out, the outcome and the counters. Go allocates it,
 * zeroed. */
typedef struct rx_status {
	rx_arena *arena;
	int64_t code, a, b, c, d;
	int64_t boundary_validations; /* inputs validated on entry */
	int64_t result_validations;   /* op results validated before stamping */
	int64_t fact_queries;         /* facts derived from raw data (validations) */
	int64_t fact_requeries;       /* facts asked for again after stamping: must stay 0 */
	int64_t arena_allocs;         /* arena buffers handed to slots */
	int64_t arena_releases;       /* arena buffers given back (all, by rx_close) */
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

#endif
