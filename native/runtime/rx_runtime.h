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

/* The outcome of one call and its counters. Go allocates it, zeroed. */
typedef struct rx_status {
	int64_t code, a, b, c, d;
	int64_t boundary_validations; /* inputs validated on entry */
	int64_t result_validations;   /* op results validated before stamping */
	int64_t fact_queries;         /* facts derived from raw data (validations) */
	int64_t fact_requeries;       /* facts asked for again after stamping: must stay 0 */
	int64_t arena_allocs;         /* arena buffers allocated */
	int64_t arena_releases;       /* arena buffers released */
} rx_status;

/* The type of every generated function. */
typedef int (*rx_entry)(const rx_arg *args, rx_status *status);

#endif
