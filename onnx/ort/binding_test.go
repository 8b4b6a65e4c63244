package ort_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

const linear = `package p

func score(x [B][3]float32, w [3][2]float32, b [2]float32) (logits [B][2]float32, classes [B]int64) {
	logits = MatMul(x, w) + b
	classes = Argmax(logits, 1)
	return
}
`

var _ = Describe("the binding", func() {
	It("loads ONNX Runtime 1.30.0 through the C API version it asks for", func() {
		lib := needLibrary()
		Expect(lib.Version()).To(Equal(ort.Version))
		Expect(ort.APIVersion).To(Equal(17))
		again, err := ort.Open(lib.Path())
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(BeIdenticalTo(lib), "one library per process and path")
	})

	It("says why a library cannot be used, and how to install it", func() {
		missing := filepath.Join(GinkgoT().TempDir(), "libonnxruntime.so.1")
		_, err := ort.Find(missing)
		Expect(err).To(MatchError(ort.ErrUnavailable))
		if _, nocgo := ort.Open(missing); nocgo != nil && strings.Contains(nocgo.Error(), "built without cgo") {
			Expect(err.Error()).To(Equal("ONNX Runtime unavailable: rxeq was built without cgo"))
			return
		}
		Expect(err.Error()).To(ContainSubstring("no ONNX Runtime library at " + missing))
		Expect(err.Error()).To(ContainSubstring("npm pack onnxruntime-node@1.30.0"))
		Expect(executor.Name(ort.Executor{Library: missing}.Name())).To(Equal(executor.ONNXRuntime))
		Expect(ort.Executor{Library: missing}.Available()).To(MatchError(ort.ErrUnavailable))

		notELF := filepath.Join(GinkgoT().TempDir(), "libonnxruntime.so.1")
		Expect(os.WriteFile(notELF, []byte("not a library"), 0o644)).To(Succeed())
		_, err = ort.Open(notELF)
		Expect(err).To(MatchError(ort.ErrUnavailable))
		Expect(err.Error()).To(ContainSubstring("loading " + notELF))
	})

	It("turns a model ONNX Runtime rejects into an *Error with its code and message", func() {
		lib := needLibrary()
		before := ort.Sessions()
		_, err := lib.NewSession([]byte("this is not a protobuf"), []string{"x"}, []string{"y"}, ort.SessionOptions{})
		var oe *ort.Error
		Expect(errors.As(err, &oe)).To(BeTrue(), "%v", err)
		Expect(oe.Code).To(Equal(ort.ErrInvalidProtobuf))
		Expect(oe.Message).To(ContainSubstring("Failed to load model"))
		Expect(err.Error()).To(HavePrefix("ort: creating a session: onnxruntime: ORT_INVALID_PROTOBUF: "))

		_, err = lib.NewSession(nil, nil, nil, ort.SessionOptions{})
		Expect(errors.As(err, &oe)).To(BeTrue())
		Expect(oe.Code).To(Equal(ort.ErrInvalidArgument))
		Expect(ort.Sessions()).To(Equal(before), "a failed session leaves nothing open")
	})

	It("fails a run whose tensors do not fit the model with ONNX Runtime's message", func() {
		lib := needLibrary()
		_, p := compile(linear)
		model, err := onnx.Export(p, "score", onnx.Meta{})
		Expect(err).NotTo(HaveOccurred())
		s, err := lib.NewSession(model, []string{"x", "w", "b"}, []string{"logits", "classes"}, ort.SessionOptions{})
		Expect(err).NotTo(HaveOccurred())
		defer s.Close()
		ctx := context.Background()
		x, w, b := tensor.NewFloat32(4, 3), tensor.NewFloat32(3, 2), tensor.NewFloat32(2)
		Expect(s.Run(ctx, []*tensor.Tensor{x, w, b}, []*tensor.Tensor{tensor.NewFloat32(4, 2), tensor.NewInt64(4)})).To(Succeed())

		err = s.Run(ctx, []*tensor.Tensor{tensor.NewFloat32(4, 5), w, b}, []*tensor.Tensor{tensor.NewFloat32(4, 2), tensor.NewInt64(4)})
		var oe *ort.Error
		Expect(errors.As(err, &oe)).To(BeTrue(), "%v", err)
		Expect(oe.Code).To(Equal(ort.ErrInvalidArgument))
		Expect(oe.Message).To(ContainSubstring("Got invalid dimensions for input: x"))

		err = s.Run(ctx, []*tensor.Tensor{x, w, b}, []*tensor.Tensor{tensor.NewFloat32(5, 2), tensor.NewInt64(4)})
		Expect(errors.As(err, &oe)).To(BeTrue(), "an output of another shape than ONNX Runtime computes: %v", err)

		err = s.Run(ctx, []*tensor.Tensor{x, w}, nil)
		Expect(err).To(MatchError(ContainSubstring("Run with 2 inputs and 0 outputs, want 3 and 2")))

		ctxDone, cancel := context.WithCancel(ctx)
		cancel()
		Expect(s.Run(ctxDone, []*tensor.Tensor{x, w, b}, []*tensor.Tensor{tensor.NewFloat32(4, 2), tensor.NewInt64(4)})).To(MatchError(context.Canceled))

		Expect(s.Close()).To(Succeed())
		Expect(s.Close()).To(Succeed(), "closing twice does nothing")
		Expect(s.Run(ctx, []*tensor.Tensor{x, w, b}, []*tensor.Tensor{tensor.NewFloat32(4, 2), tensor.NewInt64(4)})).To(MatchError(ort.ErrClosed))
	})

	It("writes the results into the caller's tensors and leaves the inputs alone", func() {
		lib := needLibrary()
		_, p := compile(linear)
		model, err := onnx.Export(p, "score", onnx.Meta{})
		Expect(err).NotTo(HaveOccurred())
		s, err := lib.NewSession(model, []string{"x", "w", "b"}, []string{"logits", "classes"}, ort.SessionOptions{Level: ort.NoOptimize})
		Expect(err).NotTo(HaveOccurred())
		defer s.Close()
		x := tensor.FromFloat32([]float32{1, 2, 3, -1, -2, -3}, 2, 3)
		w := tensor.FromFloat32([]float32{1, 0, 0, 1, 1, 1}, 3, 2)
		b := tensor.FromFloat32([]float32{0.5, -0.5}, 2)
		logits, classes := tensor.NewFloat32(2, 2), tensor.NewInt64(2)
		Expect(s.Run(context.Background(), []*tensor.Tensor{x, w, b}, []*tensor.Tensor{logits, classes})).To(Succeed())
		Expect(logits.F32).To(Equal([]float32{4.5, 4.5, -3.5, -5.5}))
		Expect(classes.I64).To(Equal([]int64{0, 0}))
		Expect(x.F32).To(Equal([]float32{1, 2, 3, -1, -2, -3}))
	})
})

var _ = Describe("the executors", func() {
	It("are onnxruntime and onnxruntime-noopt, and name ONNX Runtime and the level in the reports", func() {
		needLibrary()
		Expect(both()[0].Name()).To(Equal(executor.ONNXRuntime))
		Expect(both()[1].Name()).To(Equal(executor.ONNXRuntimeNoOpt))
		f, p := compile(linear)
		for _, e := range both() {
			pr, err := e.Prepare(context.Background(), f, p)
			Expect(err).NotTo(HaveOccurred())
			info := pr.(executor.Built).Info()
			Expect(info.Framework).To(HavePrefix("ONNX Runtime 1.30.0, graph optimization "))
			Expect(pr.Close()).To(Succeed())
		}
		Expect(executor.ProfileOf(both()[0])).To(Equal(executor.MemoryProfile{FloatBytes: 4, InPlace: true}))
	})

	It("check the inputs at the boundary with the texts every executor gives", func() {
		needLibrary()
		for _, e := range both() {
			_, err := run(e, linear, "score", map[string]*tensor.Tensor{
				"x": tensor.NewFloat32(4, 5), "w": tensor.NewFloat32(3, 2), "b": tensor.NewFloat32(2)})
			Expect(err).To(MatchError(ir.ErrShape))
			Expect(err.Error()).To(Equal("score: input x: dimension 1 is 5, want 3 ([B][3]float32)"))
			_, err = run(e, linear, "score", map[string]*tensor.Tensor{"x": tensor.NewFloat32(4, 3)})
			Expect(err).To(MatchError(ir.ErrMissingInput))
			_, err = run(e, linear, "nosuch", nil)
			Expect(err).To(MatchError(executor.ErrExecutor))
		}
	})

	It("give the checked-arithmetic errors of every other executor, and run loops of zero, one and many trips", func() {
		needLibrary()
		src := `package p

func f(x [B][2]float32, n int64, d int64) (y [B][2]float32, r int64) {
	y = x
	r = 0
	for i := range n {
		y = y * 2.0
		r = r + CheckedRem(i, d)
	}
	return
}
`
		for _, e := range both() {
			x := tensor.FromFloat32([]float32{1, 2, 3, 4}, 2, 2)
			for _, n := range []int64{-3, 0, 1, 5} {
				out, err := run(e, src, "f", map[string]*tensor.Tensor{"x": x, "n": tensor.Scalar(n), "d": tensor.Scalar(3)})
				Expect(err).NotTo(HaveOccurred())
				scale := float32(int64(1) << max(n, 0))
				Expect(out["y"].F32).To(Equal([]float32{scale, 2 * scale, 3 * scale, 4 * scale}), "n=%d", n)
				want := int64(0)
				for i := int64(0); i < n; i++ {
					want += i % 3
				}
				Expect(out["r"].I64).To(Equal([]int64{want}), "n=%d", n)
			}
			_, err := run(e, src, "f", map[string]*tensor.Tensor{"x": x, "n": tensor.Scalar(4), "d": tensor.Scalar(0)})
			Expect(err).To(MatchError(ir.ErrDivisionByZero))
			Expect(err.Error()).To(Equal("f: CheckedRem: division by zero (i=0) at t.rx:8:11"))
			f, p := compile(src)
			fb, ferr := fallback.Executor{}.Prepare(context.Background(), f, p)
			Expect(ferr).NotTo(HaveOccurred())
			_, ferr = fb.Run(context.Background(), "f", map[string]*tensor.Tensor{"x": x, "n": tensor.Scalar(4), "d": tensor.Scalar(0)})
			Expect(err.Error()).To(Equal(ferr.Error()), "the fallback's text")
			_, err = run(e, src, "f", map[string]*tensor.Tensor{"x": x, "n": tensor.Scalar(0), "d": tensor.Scalar(0)})
			Expect(err).NotTo(HaveOccurred(), "a loop that does not run cannot fail")
		}
	})

	It("fail each function whose model ONNX Runtime cannot take, and run the others", func() {
		needLibrary()
		before := ort.Sessions()
		f, p := compile(linear)
		pr, err := ort.Executor{Library: libPath()}.Prepare(context.Background(), f, p)
		Expect(err).NotTo(HaveOccurred())
		Expect(ort.Sessions()).To(Equal(before + 1))
		Expect(pr.Close()).To(Succeed())
		Expect(ort.Sessions()).To(Equal(before), "Close releases every session")
		_, err = pr.Run(context.Background(), "score", nil)
		Expect(err).To(MatchError(executor.ErrExecutor), "a closed program runs nothing")
	})
})

var _ = Describe("an executor with Lazy sessions (the isolate worker's)", func() {
	It("creates a function's session at its first run, once, and releases it on Close", func() {
		needLibrary()
		before := ort.Sessions()
		f, p := compile(linear)
		pr, err := ort.Executor{Library: libPath(), Lazy: true}.Prepare(context.Background(), f, p)
		Expect(err).NotTo(HaveOccurred())
		Expect(ort.Sessions()).To(Equal(before), "no session at Prepare")
		x := tensor.FromFloat32([]float32{1, 2, 3, -1, -2, -3}, 2, 3)
		w := tensor.FromFloat32([]float32{1, 0, 0, 1, 1, 1}, 3, 2)
		b := tensor.FromFloat32([]float32{0.5, -0.5}, 2)
		for range 2 {
			out, err := pr.Run(context.Background(), "score", map[string]*tensor.Tensor{"x": x, "w": w, "b": b})
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Outputs["logits"].F32[3]).To(Equal(float32(-5.5)))
			Expect(ort.Sessions()).To(Equal(before + 1))
		}
		Expect(pr.Close()).To(Succeed())
		Expect(ort.Sessions()).To(Equal(before))
	})
})

var _ = Describe("a prepared program", func() {
	It("is safe for concurrent runs", func() {
		needLibrary()
		f, p := compile(linear)
		pr, err := ort.Executor{Library: libPath()}.Prepare(context.Background(), f, p)
		Expect(err).NotTo(HaveOccurred())
		defer pr.Close()
		x := tensor.FromFloat32([]float32{1, 2, 3, -1, -2, -3}, 2, 3)
		w := tensor.FromFloat32([]float32{1, 0, 0, 1, 1, 1}, 3, 2)
		b := tensor.FromFloat32([]float32{0.5, -0.5}, 2)
		done := make(chan error, 8)
		for range 8 {
			go func() {
				defer GinkgoRecover()
				var err error
				for range 200 {
					var out executor.Outcome
					out, err = pr.Run(context.Background(), "score", map[string]*tensor.Tensor{"x": x, "w": w, "b": b})
					if err != nil {
						break
					}
					if out.Outputs["logits"].F32[3] != -5.5 {
						err = errors.New("wrong result")
						break
					}
				}
				done <- err
			}()
		}
		for range 8 {
			Expect(<-done).To(Succeed())
		}
	})
})
