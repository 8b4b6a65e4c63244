//go:build cgo

package native_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/tensor"
)

// badMatMul is hand-written C that no checked program produces: it declares
// a [2][3] by [4][5] MatMul, so the kernel receives operands whose inner
// dimensions differ. The native kernel rejects them itself; ATen's mm
// throws, and the torch runtime must turn that into the op's status.
const badMatMul = `#include "rx_runtime.h"

int rx_bad_mm(const rx_arg *rx_args, rx_status *rx_st)
{
	static const rx_type rx_types[3] = {
		{RX_F32, 2, {2, 3, 0, 0}},
		{RX_F32, 2, {4, 5, 0, 0}},
		{RX_F32, 2, {2, 5, 0, 0}},
	};
	rx_ctx rx_c;
	rx_val rx_v[3];
	RX_TRY(rx_open(&rx_c, rx_args, rx_st, rx_v, 3, rx_types, 2, 1, 0));
	RX_TRY(rx_check_input(&rx_c, 0, &rx_v[0]));
	RX_TRY(rx_check_input(&rx_c, 1, &rx_v[1]));
	RX_TRY(rx_bind_output(&rx_c, 0, &rx_v[2]));
	RX_TRY(rx_matmul(&rx_c, &rx_v[2], &rx_v[0], &rx_v[1]));
	RX_TRY(rx_matmul(&rx_c, &rx_v[2], &rx_v[0], &rx_v[1]));
rx_done:
	return rx_close(&rx_c);
}
`

var _ = Describe("an exception inside ATen", Label("native", "torch"), func() {
	It("becomes the op's RX_E_KERNEL status and an ErrKernel error, not a crash", func() {
		needTorch()
		args := []*tensor.Tensor{tensor.NewFloat32(2, 3), tensor.NewFloat32(4, 5), tensor.NewFloat32(2, 5)}
		st, err := native.InvokeSource(context.Background(), native.Options{CacheDir: suiteCache, Runtime: executor.Torch}, badMatMul, "rx_bad_mm", args...)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Code).To(Equal(int64(native.StatusKernel)))
		Expect(native.KernelOp(st.A).String()).To(Equal("MatMul"))
		Expect(st.Err).To(MatchError(native.ErrKernel))
		Expect(st.Err.Error()).To(Equal("framework kernel failed: rx_bad_mm: MatMul: the framework threw (a bug in rxeq's torch runtime or in libtorch, never in the program)"))
		// The first failure stops the call: no completed kernel call, no result, and
		// the arena is still given back.
		Expect(st.Counters.KernelCalls).To(BeZero())
		Expect(st.Counters.BoundaryValidations).To(Equal(int64(2)))
		Expect(st.Counters.ResultValidations).To(BeZero())
		Expect(st.Counters.ArenaReleases).To(Equal(st.Counters.ArenaAllocs))

		// The process goes on: a later call of a real program still works.
		_, p := parse("score_linear.rx", readTestdata("score_linear.rx"))
		runTorch(compileTorch(p), "score_linear", map[string]*tensor.Tensor{"x": tensor.NewFloat32(1, 32), "w": tensor.NewFloat32(32, 8), "b": tensor.NewFloat32(8)})
	})

	It("is an internal shape error in the native runtime, which checks the operands itself", func() {
		args := []*tensor.Tensor{tensor.NewFloat32(2, 3), tensor.NewFloat32(4, 5), tensor.NewFloat32(2, 5)}
		st, err := native.InvokeSource(context.Background(), native.Options{CacheDir: suiteCache}, badMatMul, "rx_bad_mm", args...)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Code).To(Equal(int64(native.StatusInternal)))
	})
})
