package conformance_test

import (
	"context"
	"math"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/onnx/conformance"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/tensor"
)

func requireNodeTests() {
	GinkgoHelper()
	if _, err := os.Stat(conformance.DefaultRoot); err != nil {
		Skip("ONNX's node tests are not installed (" + err.Error() + "); apt-get install libonnx-testdata (ci/setup.sh does)")
	}
}

// failures formats the failures for a failed expectation: one line per
// test, with its name.
func failures(r *conformance.Report) string {
	var b strings.Builder
	for _, f := range r.Failures {
		b.WriteString(f.Test + " (" + f.Executor + "): " + f.Message + "\n")
	}
	return b.String()
}

var _ = Describe("ONNX's node tests", func() {
	It("are imported where rxeq has the ops, and the oracle and the fallback agree with every expected output", func() {
		requireNodeTests()
		r, err := conformance.Run(context.Background(), conformance.DefaultRoot, []executor.Executor{oracle.Executor{}, fallback.Executor{}})
		Expect(err).NotTo(HaveOccurred())
		var out strings.Builder
		r.Write(&out)
		GinkgoWriter.Println(out.String())
		Expect(r.Found).To(BeNumerically(">=", 900))
		Expect(r.Imported).To(BeNumerically(">=", 100))
		Expect(r.Failures).To(BeEmpty(), failures(r))
		Expect(r.Passed["oracle"]).To(Equal(r.Imported))
		Expect(r.Passed["fallback"]).To(Equal(r.Imported))
		Expect(r.NotImported["op Shape"]).To(BeNumerically(">", 0))
		Expect(out.String()).To(ContainSubstring("ONNX node tests: "))
	})

	DescribeTable("imports the tests of the ops rxeq has",
		func(test string) {
			requireNodeTests()
			c, err := conformance.Load(conformance.DefaultRoot + "/" + test)
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Sets).NotTo(BeEmpty())
		},
		Entry(nil, "test_add_bcast"), Entry(nil, "test_gemm_all_attributes"), Entry(nil, "test_gemm_transposeA"),
		Entry(nil, "test_softmax_axis_0"), Entry(nil, "test_logsoftmax_negative_axis"), Entry(nil, "test_matmul_2d"),
		Entry(nil, "test_reduce_sum_keepdims_example"), Entry(nil, "test_reduce_mean_do_not_keepdims_random"),
		Entry(nil, "test_reduce_max_default_axes_keepdim_example"), Entry(nil, "test_argmax_no_keepdims_example"),
		Entry(nil, "test_max_one_input"), Entry(nil, "test_min_two_inputs"), Entry(nil, "test_sum_example"),
		Entry(nil, "test_mean_example"), Entry(nil, "test_sigmoid"), Entry(nil, "test_relu"), Entry(nil, "test_transpose_all_permutations_0"),
		Entry(nil, "test_squeeze"), Entry(nil, "test_reciprocal"), Entry(nil, "test_clip_splitbounds"), Entry(nil, "test_leakyrelu"),
		Entry(nil, "test_argmax_keepdims_example"), Entry(nil, "test_argmax_negative_axis_keepdims_random"),
		Entry(nil, "test_unsqueeze_axis_0"), Entry(nil, "test_reshape_negative_extended_dims"),
	)

	DescribeTable("refuses the tests rxeq cannot express, with the class and op",
		func(test, class, op string) {
			requireNodeTests()
			_, err := conformance.Load(conformance.DefaultRoot + "/" + test)
			var ie *onnx.ImportError
			Expect(err).To(BeAssignableToTypeOf(ie))
			ie = err.(*onnx.ImportError)
			Expect(ie.Class).To(Equal(class))
			Expect(ie.Op).To(Equal(op))
		},
		Entry(nil, "test_unsqueeze_axis_1", onnx.ClassShape, "Unsqueeze"),
		Entry(nil, "test_flatten_axis1", onnx.ClassShape, "Flatten"),
		Entry(nil, "test_argmax_no_keepdims_example_select_last_index", onnx.ClassAttr, "ArgMax"),
		Entry(nil, "test_matmul_3d", onnx.ClassRank, "MatMul"),
		Entry(nil, "test_pow", onnx.ClassOp, "Pow"),
		Entry(nil, "test_cast_FLOAT_to_DOUBLE", onnx.ClassDType, "Cast"),
	)

	It("runs every imported test through native and torch too", Label("native", "slow"), func() {
		requireNodeTests()
		sel, err := builtin.Select([]executor.Name{executor.Native, executor.Torch}, builtin.Config{}, nil)
		Expect(err).NotTo(HaveOccurred())
		defer sel.Close()
		if len(sel.Executors) == 0 {
			Skip("neither native nor torch can run here")
		}
		r, err := conformance.Run(context.Background(), conformance.DefaultRoot, sel.Executors)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Failures).To(BeEmpty(), failures(r))
		for _, e := range sel.Executors {
			Expect(r.Passed[string(e.Name())]).To(Equal(r.Imported), string(e.Name()))
		}
	})
})

var _ = Describe("ONNX's node tests through ONNX Runtime", func() {
	// Each imported test is exported again by rxeq (onnx.Export) and run
	// by ONNX Runtime, with its graph optimizations and without.
	It("agree with every expected output for onnxruntime and onnxruntime-noopt", func() {
		requireNodeTests()
		cfg := builtin.Config{}.FromEnv(os.Getenv)
		sel, err := builtin.Select([]executor.Name{executor.ONNXRuntime, executor.ONNXRuntimeNoOpt}, cfg, nil)
		Expect(err).NotTo(HaveOccurred())
		defer sel.Close()
		if len(sel.Unavailable) > 0 {
			if os.Getenv("RXEQ_REQUIRE_ORT") != "" {
				Fail("ONNX Runtime is required here (RXEQ_REQUIRE_ORT is set) but: " + sel.Unavailable[0].Reason)
			}
			Skip("ONNX Runtime is not installed: " + sel.Unavailable[0].Reason)
		}
		r, err := conformance.Run(context.Background(), conformance.DefaultRoot, sel.Executors)
		Expect(err).NotTo(HaveOccurred())
		var out strings.Builder
		r.Write(&out)
		GinkgoWriter.Println(out.String())
		Expect(r.Imported).To(BeNumerically(">=", 100))
		Expect(r.Failures).To(BeEmpty(), failures(r))
		for _, e := range sel.Executors {
			Expect(r.Passed[string(e.Name())]).To(Equal(r.Imported), string(e.Name()))
		}
	})
})

// ortDiffers are the node tests whose own model ONNX Runtime 1.30.0 does
// not run to ONNX's expected outputs (libonnx-testdata 1.12.0), at both
// levels; docs/import.md says why for each.
var ortDiffers = []string{
	// training ops of the ai.onnx.preview.training domain: not registered
	"test_adagrad", "test_adagrad_multiple", "test_adam", "test_adam_multiple",
	"test_momentum", "test_momentum_multiple", "test_nesterov_momentum",
	// RNN, GRU and LSTM with layout = 1: refused by the CPU kernels
	"test_gru_batchwise", "test_lstm_batchwise", "test_simple_rnn_batchwise",
	// random numbers: another generator than NumPy's
	"test_bernoulli_seed", "test_bernoulli_seed_expanded",
	// float error beyond 1e-7 absolute where the expected value is 0
	"test_dft", "test_dft_axis", "test_dft_inverse", "test_stft", "test_stft_with_window",
	// expected values written with four decimals
	"test_gridsample_bicubic", "test_roialign_aligned_false", "test_roialign_aligned_true",
	// another reading of the op than ONNX 1.12's reference
	"test_maxunpool_export_with_output_shape",
	"test_resize_downsample_scales_cubic_align_corners", "test_resize_downsample_scales_linear_align_corners",
}

var _ = Describe("ONNX's own models through ONNX Runtime (RunModels)", func() {
	It("agree except for the tests docs/import.md lists, at both levels", func() {
		requireNodeTests()
		lib, err := ort.Find(os.Getenv(builtin.EnvORTLib))
		if err != nil {
			if os.Getenv("RXEQ_REQUIRE_ORT") != "" {
				Fail("ONNX Runtime is required here (RXEQ_REQUIRE_ORT is set) but: " + err.Error())
			}
			Skip("ONNX Runtime is not installed: " + err.Error())
		}
		for _, l := range []ort.Level{ort.Optimize, ort.NoOptimize} {
			r, err := conformance.RunModels(context.Background(), conformance.DefaultRoot, lib, l, "onnxruntime")
			Expect(err).NotTo(HaveOccurred())
			var out strings.Builder
			r.Write(&out)
			GinkgoWriter.Println(out.String())
			Expect(r.Found).To(Equal(932))
			Expect(r.Runnable).To(Equal(687))
			var differs []string
			for _, f := range r.Disagree {
				differs = append(differs, f.Test)
			}
			Expect(differs).To(ConsistOf(ortDiffers), out.String())
			Expect(r.Agree).To(Equal(r.Runnable - len(ortDiffers)))
		}
	})
})

var _ = Describe("Compare", func() {
	f := func(v ...float32) *tensor.Tensor { return tensor.FromFloat32(v, len(v)) }
	It("holds float outputs to rtol 1e-5 and atol 1e-7, NaN to NaN and infinities exactly", func() {
		Expect(conformance.Compare("y", f(1, 0), tensor.FromFloat64([]float64{1 + 0.9e-5, 0.9e-7}, 2))).To(BeEmpty())
		Expect(conformance.Compare("y", f(1), tensor.FromFloat64([]float64{1 + 2e-5}, 1))).To(Equal("y[0]: 1.00002, want 1 (allowed 1.0e-05)"))
		nan, inf := float32(math.NaN()), float32(math.Inf(1))
		Expect(conformance.Compare("y", f(nan), f(nan))).To(BeEmpty())
		Expect(conformance.Compare("y", f(nan), f(1))).To(Equal("y[0]: 1, want NaN"))
		Expect(conformance.Compare("y", f(inf), tensor.FromFloat64([]float64{1e39}, 1))).To(BeEmpty())
		Expect(conformance.Compare("y", f(inf), f(-inf))).To(Equal("y[0]: -Inf, want +Inf"))
		Expect(conformance.Compare("y", f(1, 2), f(1))).To(Equal("y: shape [1], want [2]"))
		Expect(conformance.Compare("c", tensor.FromInt64([]int64{3}, 1), tensor.FromInt64([]int64{2}, 1))).To(Equal("c[0]: 2, want 3"))
	})
})
