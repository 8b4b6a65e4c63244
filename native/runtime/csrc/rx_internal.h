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

/* rx_dim_of resolves a checked dim spec (>= 0 a size, -(k+1) symbol k). */
RX_HIDDEN int64_t rx_dim_of(const rx_ctx *c, int64_t spec);

/* rx_operand returns the trusted facts of an operand, or NULL (and an
 * internal error) for a slot whose facts were never stamped. */
RX_HIDDEN const rx_val *rx_operand(rx_ctx *c, const rx_val *x);

/* rx_out prepares slot d for a result of the given dtype and dims and
 * returns where to write it (NULL with the status set on failure: a size
 * that overflows, or no memory). fresh asks for a buffer other than the
 * slot's current data. The facts are set but not trusted. */
RX_HIDDEN void *rx_out(rx_ctx *c, rx_val *d, int32_t dtype, int32_t rank, const int64_t *dims, int fresh);

/* rx_result validates a written result against its checked type and stamps
 * its facts trusted. */
RX_HIDDEN int rx_result(rx_ctx *c, rx_val *d);

/* rx_count multiplies dims into *n with overflow checks; it returns the
 * index of the dim at which the count overflowed int64, or -1. */
RX_HIDDEN int32_t rx_count(int32_t rank, const int64_t *dims, int64_t *n);

#ifdef __cplusplus
}
#endif

#endif
