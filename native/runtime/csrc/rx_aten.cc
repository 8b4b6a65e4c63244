/*
 * rx_aten.cc: the float kernels of rx_runtime.h over libtorch's ATen
 * (executor "torch"), linked with rx_context.c (compiled as C) into one
 * runtime library. Generated code is the same translation unit as for
 * rxeq's own kernels (rx_kernels.c); only the library behind it differs.
 *
 * Every kernel reads its operands' trusted facts (rx_operand), wraps the
 * invocation's own memory in tensors with at::from_blob (no copies, no
 * ownership), asks rx_out for the destination buffer, and runs one ATen
 * `_out` op writing into it. The facts of the result (dtype, rank, dims,
 * data pointer, contiguity, device) are then read back from the tensor ATen
 * returned and validated by rx_result before they are stamped trusted; a
 * result ATen wrote anywhere but the buffer rx_out gave is an internal
 * error. Each ATen call counts one kernel call (rx_status.kernel_calls);
 * integer scalar ops, constants, copies, moves and control flow live in
 * rx_context.c and the generated C and never reach ATen. Nothing is kept
 * across calls: no tensor outlives the kernel that made it.
 *
 * Every extern "C" function catches every exception at its own boundary
 * (rx_guard): std::bad_alloc and ATen's allocation failures become
 * RX_E_NOMEM, every other exception RX_E_KERNEL with a = the RX_K_* op, so
 * nothing unwinds through C or Go.
 *
 * Numerics, where they differ from rx_kernels.c (tests pin each one):
 *   - Maximum and Minimum of two zeros of different sign return their
 *     first operand (ATen's maximum(-0, +0) is -0; rx_maxf gives +0), and
 *     Max along an axis of such zeros returns the first one met; Relu(-0)
 *     is -0 (rxeq's own kernel gives +0). Both propagate NaN as rxeq does.
 *     Equal values, but 1/x of them are opposite infinities: such a
 *     program fails on torch against the oracle. Kept on purpose (this
 *     runtime shows what ATen computes), documented and pinned by tests.
 *   - MatMul is OpenBLAS's sgemm and Sum/Mean use ATen's cascade sum: the
 *     summation order differs from index order (the tolerance absorbs it),
 *     and ATen's kernels were built without -ffp-contract=off (its
 *     vectorised exp/tanh/log come from SLEEF and may fuse).
 *   - Argmax returns the first maximum and the first NaN, exactly as rxeq
 *     (checked on ties, NaN, ±Inf).
 *   - Mean is ATen's mean, which for float on CPU is sum / n.
 *
 * Threads: rx_aten_configure (called by Go once per loaded runtime) sets
 * the intra-op thread count every ATen call uses, including OpenBLAS's pool;
 * the inter-op pool is set to one thread once per process, guarded, since
 * libtorch throws when that setting is made twice.
 */
#include "rx_internal.h"

#include <ATen/ExpandUtils.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/add.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/argmax.h>
#include <ATen/ops/div.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/log.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/neg.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/t_copy.h>
#include <ATen/ops/tanh.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

namespace {

/* The intra-op thread count every kernel runs with (rx_aten_configure). */
std::atomic<int> want_threads{1};
/* The count this OS thread last applied (OpenMP's setting is per thread). */
thread_local int have_threads = 0;
std::once_flag interop_once;

/* apply_threads makes the calling thread's ATen (OpenMP) setting the
 * configured one; a no-op once it is. */
inline void apply_threads()
{
	int n = want_threads.load(std::memory_order_relaxed);
	if (have_threads != n) {
		at::set_num_threads(n);
		have_threads = n;
	}
}

/* kernel_error maps an ATen exception's text to a status code. */
int kernel_error(rx_ctx *c, int op, const char *what)
{
	if (what && (std::strstr(what, "can't allocate memory") || std::strstr(what, "Out of memory")))
		return rx_fail(c, RX_E_NOMEM, 0, op, 0, 0);
	return rx_fail(c, RX_E_KERNEL, op, 0, 0, 0);
}

/* rx_guard runs one kernel body, turning every exception into the op's
 * status. It is the only way an ATen call is made. */
template <typename F> int rx_guard(rx_ctx *c, int op, F body) noexcept
{
	try {
		/* No kernel here needs autograd: inference mode skips the
		 * autograd and view-tracking dispatch keys, as PyTorch's
		 * torch.inference_mode() does. */
		c10::InferenceMode guard;
		apply_threads();
		return body();
	} catch (const std::bad_alloc &) {
		return rx_fail(c, RX_E_NOMEM, 0, op, 0, 0);
	} catch (const c10::Error &e) {
		return kernel_error(c, op, e.what());
	} catch (const std::exception &e) {
		return kernel_error(c, op, e.what());
	} catch (...) {
		return rx_fail(c, RX_E_KERNEL, op, 0, 0, 0);
	}
}

at::TensorOptions options_of(int32_t dtype)
{
	return at::TensorOptions().dtype(dtype == RX_I64 ? at::kLong : at::kFloat).device(at::kCPU);
}

/* view wraps a slot's trusted data as a tensor without copying or owning. */
at::Tensor view(const rx_val *x)
{
	return at::from_blob(x->data, at::IntArrayRef(x->dims, (size_t)x->rank), options_of(x->dtype));
}

/* out_view wraps the buffer rx_out returned, with the facts it set. */
at::Tensor out_view(const rx_val *d, void *p)
{
	return at::from_blob(p, at::IntArrayRef(d->dims, (size_t)d->rank), options_of(d->dtype));
}

/* stamp reads the facts of the tensor ATen returned into slot d and
 * validates them (rx_result) before they are trusted. p is the buffer
 * rx_out gave: a result anywhere else (ATen resized or reallocated it) or
 * not contiguous on cpu:0 is an internal error. */
int stamp(rx_ctx *c, rx_val *d, const at::Tensor &t, void *p)
{
	c->st->kernel_calls++;
	int64_t slot = d - c->v;
	if (t.device() != at::Device(at::kCPU) || !t.is_contiguous() || (t.numel() > 0 && t.data_ptr() != p))
		return rx_fail(c, RX_E_INTERNAL, RX_I_RESULT, slot, -1, -1);
	int64_t rank = t.dim();
	if (rank > RX_MAX_RANK)
		return rx_fail(c, RX_E_INTERNAL, RX_I_RESULT, slot, -1, rank);
	switch (t.scalar_type()) {
	case at::kFloat:
		d->dtype = RX_F32;
		break;
	case at::kLong:
		d->dtype = RX_I64;
		break;
	default:
		d->dtype = RX_INVALID;
	}
	d->rank = (int32_t)rank;
	for (int64_t i = 0; i < rank; i++)
		d->dims[i] = t.size(i);
	d->len = t.numel();
	d->data = p;
	return rx_result(c, d);
}

/* binary runs a broadcasting elementwise op. The destination may be an
 * operand (ATen's elementwise ops allow a fully overlapping output). */
template <typename Op> int binary(rx_ctx *c, rx_val *d, rx_val *av, rx_val *bv, Op op)
{
	const rx_val *A = rx_operand(c, av), *B = rx_operand(c, bv);
	if (!A || !B)
		return c->st->code;
	at::Tensor a = view(A), b = view(B);
	at::DimVector dims = at::infer_size_dimvector(a.sizes(), b.sizes());
	void *p = rx_out(c, d, RX_F32, (int32_t)dims.size(), dims.data(), 0);
	if (!p)
		return c->st->code;
	at::Tensor o = out_view(d, p);
	op(o, a, b);
	return stamp(c, d, o, p);
}

/* unary runs an elementwise op. */
template <typename Op> int unary(rx_ctx *c, rx_val *d, rx_val *av, Op op)
{
	const rx_val *A = rx_operand(c, av);
	if (!A)
		return c->st->code;
	at::Tensor a = view(A);
	void *p = rx_out(c, d, RX_F32, A->rank, a.sizes().data(), 0);
	if (!p)
		return c->st->code;
	at::Tensor o = out_view(d, p);
	op(o, a);
	return stamp(c, d, o, p);
}

/* reduce runs an op along axis into a result with that axis dropped (or
 * kept with size 1); dtype is the result's. */
template <typename Op> int reduce(rx_ctx *c, rx_val *d, rx_val *av, int32_t axis, int keep, int32_t dtype, Op op)
{
	const rx_val *A = rx_operand(c, av);
	if (!A)
		return c->st->code;
	at::Tensor a = view(A);
	int64_t dims[RX_MAX_RANK];
	int32_t r = 0;
	for (int32_t i = 0; i < A->rank; i++) {
		if (i != axis)
			dims[r++] = A->dims[i];
		else if (keep)
			dims[r++] = 1;
	}
	void *p = rx_out(c, d, dtype, r, dims, d == av);
	if (!p)
		return c->st->code;
	at::Tensor o = out_view(d, p);
	op(o, a);
	return stamp(c, d, o, p);
}

/* along runs a shape-preserving op along axis (softmax, log-softmax). */
template <typename Op> int along(rx_ctx *c, rx_val *d, rx_val *av, Op op)
{
	const rx_val *A = rx_operand(c, av);
	if (!A)
		return c->st->code;
	at::Tensor a = view(A);
	void *p = rx_out(c, d, RX_F32, A->rank, a.sizes().data(), d == av);
	if (!p)
		return c->st->code;
	at::Tensor o = out_view(d, p);
	op(o, a);
	return stamp(c, d, o, p);
}

} // namespace

/* The op codes of RX_E_KERNEL (status a): the same numbers as Go's
 * native.KernelOp names. */
enum {
	RX_K_ADD = 1,
	RX_K_SUB,
	RX_K_MUL,
	RX_K_DIV,
	RX_K_MAXIMUM,
	RX_K_MINIMUM,
	RX_K_NEG,
	RX_K_TANH,
	RX_K_EXP,
	RX_K_LOG,
	RX_K_SIGMOID,
	RX_K_RELU,
	RX_K_ABS,
	RX_K_SQRT,
	RX_K_MATMUL,
	RX_K_TRANSPOSE,
	RX_K_SOFTMAX,
	RX_K_LOGSOFTMAX,
	RX_K_SUM,
	RX_K_MEAN,
	RX_K_MAX,
	RX_K_ARGMAX
};

extern "C" {

int rx_add(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b)
{
	return rx_guard(c, RX_K_ADD, [&]() -> int { return binary(c, d, a, b, [](at::Tensor &o, const at::Tensor &x, const at::Tensor &y) { at::add_out(o, x, y); }); });
}

int rx_sub(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b)
{
	return rx_guard(c, RX_K_SUB, [&]() -> int { return binary(c, d, a, b, [](at::Tensor &o, const at::Tensor &x, const at::Tensor &y) { at::sub_out(o, x, y); }); });
}

int rx_mul(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b)
{
	return rx_guard(c, RX_K_MUL, [&]() -> int { return binary(c, d, a, b, [](at::Tensor &o, const at::Tensor &x, const at::Tensor &y) { at::mul_out(o, x, y); }); });
}

int rx_div(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b)
{
	return rx_guard(c, RX_K_DIV, [&]() -> int { return binary(c, d, a, b, [](at::Tensor &o, const at::Tensor &x, const at::Tensor &y) { at::div_out(o, x, y); }); });
}

int rx_maximum(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b)
{
	return rx_guard(c, RX_K_MAXIMUM, [&]() -> int { return binary(c, d, a, b, [](at::Tensor &o, const at::Tensor &x, const at::Tensor &y) { at::maximum_out(o, x, y); }); });
}

int rx_minimum(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b)
{
	return rx_guard(c, RX_K_MINIMUM, [&]() -> int { return binary(c, d, a, b, [](at::Tensor &o, const at::Tensor &x, const at::Tensor &y) { at::minimum_out(o, x, y); }); });
}

int rx_neg(rx_ctx *c, rx_val *d, rx_val *a)
{
	return rx_guard(c, RX_K_NEG, [&]() -> int { return unary(c, d, a, [](at::Tensor &o, const at::Tensor &x) { at::neg_out(o, x); }); });
}

int rx_tanh(rx_ctx *c, rx_val *d, rx_val *a)
{
	return rx_guard(c, RX_K_TANH, [&]() -> int { return unary(c, d, a, [](at::Tensor &o, const at::Tensor &x) { at::tanh_out(o, x); }); });
}

int rx_exp(rx_ctx *c, rx_val *d, rx_val *a)
{
	return rx_guard(c, RX_K_EXP, [&]() -> int { return unary(c, d, a, [](at::Tensor &o, const at::Tensor &x) { at::exp_out(o, x); }); });
}

int rx_log(rx_ctx *c, rx_val *d, rx_val *a)
{
	return rx_guard(c, RX_K_LOG, [&]() -> int { return unary(c, d, a, [](at::Tensor &o, const at::Tensor &x) { at::log_out(o, x); }); });
}

int rx_sigmoid(rx_ctx *c, rx_val *d, rx_val *a)
{
	return rx_guard(c, RX_K_SIGMOID, [&]() -> int { return unary(c, d, a, [](at::Tensor &o, const at::Tensor &x) { at::sigmoid_out(o, x); }); });
}

int rx_relu(rx_ctx *c, rx_val *d, rx_val *a)
{
	return rx_guard(c, RX_K_RELU, [&]() -> int { return unary(c, d, a, [](at::Tensor &o, const at::Tensor &x) { at::relu_out(o, x); }); });
}

int rx_abs(rx_ctx *c, rx_val *d, rx_val *a)
{
	return rx_guard(c, RX_K_ABS, [&]() -> int { return unary(c, d, a, [](at::Tensor &o, const at::Tensor &x) { at::abs_out(o, x); }); });
}

int rx_sqrt(rx_ctx *c, rx_val *d, rx_val *a)
{
	return rx_guard(c, RX_K_SQRT, [&]() -> int { return unary(c, d, a, [](at::Tensor &o, const at::Tensor &x) { at::sqrt_out(o, x); }); });
}

/* rx_matmul: [M,K] x [K,N] -> [M,N] with at::mm_out. The inner dimensions
 * are checked by ATen (a mismatch is a bug in rxeq and throws). */
int rx_matmul(rx_ctx *c, rx_val *d, rx_val *av, rx_val *bv)
{
	return rx_guard(c, RX_K_MATMUL, [&]() -> int {
		const rx_val *A = rx_operand(c, av), *B = rx_operand(c, bv);
		if (!A || !B)
			return c->st->code;
		at::Tensor a = view(A), b = view(B);
		int64_t dims[2] = {A->dims[0], B->dims[1]};
		void *p = rx_out(c, d, RX_F32, 2, dims, d == av || d == bv);
		if (!p)
			return c->st->code;
		at::Tensor o = out_view(d, p);
		at::mm_out(o, a, b);
		return stamp(c, d, o, p);
	});
}

/* rx_transpose: a contiguous [N,M] copy of a [M,N] matrix (at::t_copy_out). */
int rx_transpose(rx_ctx *c, rx_val *d, rx_val *av)
{
	return rx_guard(c, RX_K_TRANSPOSE, [&]() -> int {
		const rx_val *A = rx_operand(c, av);
		if (!A)
			return c->st->code;
		at::Tensor a = view(A);
		int64_t dims[2] = {A->dims[1], A->dims[0]};
		void *p = rx_out(c, d, RX_F32, 2, dims, d == av);
		if (!p)
			return c->st->code;
		at::Tensor o = out_view(d, p);
		at::t_copy_out(o, a);
		return stamp(c, d, o, p);
	});
}

/* The fused MatMul entry points run the ops they stand for, one by one,
 * through the slots of their intermediates (t, m): the same ATen calls,
 * results and counters as the unfused code. */
int rx_matmul_bt(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *t)
{
	int rc = rx_transpose(c, t, b);
	return rc != RX_OK ? rc : rx_matmul(c, d, a, t);
}

int rx_matmul_bias(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *bias, rx_val *m)
{
	int rc = rx_matmul(c, m, a, b);
	return rc != RX_OK ? rc : rx_add(c, d, m, bias);
}

int rx_matmul_bt_bias(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *bias, rx_val *t, rx_val *m)
{
	int rc = rx_matmul_bt(c, m, a, b, t);
	return rc != RX_OK ? rc : rx_add(c, d, m, bias);
}

int rx_matmul_bias_tanh(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *bias, rx_val *m, rx_val *s)
{
	int rc = rx_matmul_bias(c, s, a, b, bias, m);
	return rc != RX_OK ? rc : rx_tanh(c, d, s);
}

int rx_matmul_bt_bias_tanh(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, rx_val *bias, rx_val *t, rx_val *m,
			   rx_val *s)
{
	int rc = rx_matmul_bt_bias(c, s, a, b, bias, t, m);
	return rc != RX_OK ? rc : rx_tanh(c, d, s);
}

/* rx_ew2 runs its two elementwise ops one by one, through t. */
namespace {
/* ew_ops are rx_add, rx_sub, rx_mul and rx_div by their RX_EW_* codes. */
int (*const ew_ops[5])(rx_ctx *, rx_val *, rx_val *, rx_val *) = {nullptr, rx_add, rx_sub, rx_mul, rx_div};
} // namespace

int rx_ew2(rx_ctx *c, rx_val *d, rx_val *a, rx_val *b, int32_t op1, rx_val *cc, int32_t op2, rx_val *t)
{
	if (op1 < 1 || op1 > 4 || op2 < 1 || op2 > 4)
		return rx_fail(c, RX_E_INTERNAL, RX_I_SHAPE, d - c->v, -1, op1 < 1 || op1 > 4 ? op1 : op2);
	int rc = ew_ops[op1](c, t, a, b);
	return rc != RX_OK ? rc : ew_ops[op2](c, d, t, cc);
}

/* rx_ew_const stores k into t (rx_const_f) and runs the op through it. */
int rx_ew_const(rx_ctx *c, rx_val *d, rx_val *a, int32_t op, float k, rx_val *t)
{
	if (op < 1 || op > 4)
		return rx_fail(c, RX_E_INTERNAL, RX_I_SHAPE, d - c->v, -1, op);
	int rc = rx_const_f(c, t, k);
	return rc != RX_OK ? rc : ew_ops[op](c, d, a, t);
}

int rx_softmax(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis)
{
	return rx_guard(c, RX_K_SOFTMAX, [&]() -> int { return along(c, d, a, [axis](at::Tensor &o, const at::Tensor &x) { at::softmax_out(o, x, axis); }); });
}

int rx_logsoftmax(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis)
{
	return rx_guard(c, RX_K_LOGSOFTMAX, [&]() -> int { return along(c, d, a, [axis](at::Tensor &o, const at::Tensor &x) { at::log_softmax_out(o, x, axis); }); });
}

int rx_sum(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis, int keep)
{
	return rx_guard(c, RX_K_SUM, [&]() -> int {
		return reduce(c, d, a, axis, keep, RX_F32, [axis, keep](at::Tensor &o, const at::Tensor &x) {
			int64_t dim[1] = {axis};
			at::sum_out(o, x, at::IntArrayRef(dim, 1), keep != 0);
		});
	});
}

int rx_mean(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis, int keep)
{
	return rx_guard(c, RX_K_MEAN, [&]() -> int {
		return reduce(c, d, a, axis, keep, RX_F32, [axis, keep](at::Tensor &o, const at::Tensor &x) {
			int64_t dim[1] = {axis};
			at::mean_out(o, x, at::IntArrayRef(dim, 1), keep != 0);
		});
	});
}

int rx_max(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis, int keep)
{
	return rx_guard(c, RX_K_MAX, [&]() -> int {
		return reduce(c, d, a, axis, keep, RX_F32, [axis, keep](at::Tensor &o, const at::Tensor &x) {
			int64_t dim[1] = {axis};
			at::amax_out(o, x, at::IntArrayRef(dim, 1), keep != 0);
		});
	});
}

int rx_argmax(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis)
{
	return rx_guard(c, RX_K_ARGMAX, [&]() -> int {
		return reduce(c, d, a, axis, 0, RX_I64, [axis](at::Tensor &o, const at::Tensor &x) { at::argmax_out(o, x, axis, false); });
	});
}

int rx_argmax_keep(rx_ctx *c, rx_val *d, rx_val *a, int32_t axis)
{
	return rx_guard(c, RX_K_ARGMAX, [&]() -> int {
		return reduce(c, d, a, axis, 1, RX_I64, [axis](at::Tensor &o, const at::Tensor &x) { at::argmax_out(o, x, axis, true); });
	});
}

/* rx_argmax_scalar: Argmax of a rank-1 tensor into an int64 scalar of the
 * generated code (at::argmax_out into a tensor over *out). */
int rx_argmax_scalar(rx_ctx *c, rx_val *av, int32_t axis, int64_t *out)
{
	return rx_guard(c, RX_K_ARGMAX, [&]() -> int {
		const rx_val *A = rx_operand(c, av);
		if (!A)
			return c->st->code;
		at::Tensor a = view(A);
		int64_t best = 0;
		if (A->len > 0) {
			at::Tensor o = at::from_blob(&best, at::IntArrayRef(), options_of(RX_I64));
			at::argmax_out(o, a, axis, false);
			c->st->kernel_calls++;
			if (o.data_ptr() != &best || o.dim() != 0 || o.scalar_type() != at::kLong)
				return rx_fail(c, RX_E_INTERNAL, RX_I_RESULT, -1, -1, o.dim());
		}
		*out = best;
		return (int)RX_OK;
	});
}

/* rx_aten_configure is called by Go after loading the runtime, not by
 * generated code: it sets the intra-op thread count of every later kernel
 * (threads >= 1; OpenBLAS's pool too), sets the inter-op pool to one thread
 * once per process, and writes the libtorch version the runtime was
 * compiled against into version (n bytes). It returns 0, or -1 with the
 * reason in version. */
__attribute__((visibility("default"))) int rx_aten_configure(int threads, char *version, size_t n)
{
	std::string msg = TORCH_VERSION;
	int rc = 0;
	try {
		if (threads < 1)
			threads = 1;
		std::call_once(interop_once, [] {
			try {
				at::set_num_interop_threads(1);
			} catch (...) {
				/* Already set (or the pool started) in this process. */
			}
		});
		want_threads.store(threads, std::memory_order_relaxed);
		apply_threads();
		if (void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD)) {
			if (void *f = dlsym(h, "openblas_set_num_threads"))
				reinterpret_cast<void (*)(int)>(f)(threads);
			dlclose(h);
		}
	} catch (const std::exception &e) {
		msg = e.what();
		rc = -1;
	} catch (...) {
		msg = "unknown exception";
		rc = -1;
	}
	if (n > 0) {
		size_t k = msg.size() < n - 1 ? msg.size() : n - 1;
		std::memcpy(version, msg.data(), k);
		version[k] = 0;
	}
	return rc;
}

} // extern "C"
