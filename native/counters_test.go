//go:build cgo

package native_test

import (
	"context"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("invocation context", Label("native"), func() {
	linearInputs := func(batch int) map[string]*tensor.Tensor {
		return map[string]*tensor.Tensor{
			"x": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, 1, batch, 32),
			"w": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 0.3}, 2, 32, 8),
			"b": tensor.Generate(tensor.Dist{Kind: tensor.Uniform, A: -0.1, B: 0.1}, 3, 8),
		}
	}

	It("validates each input once, each op result once, never re-queries, and releases every allocation over 100000 calls", func() {
		_, p := parse("score_linear.rx", readTestdata("score_linear.rx"))
		prog := compile(p)
		in := linearInputs(1)
		const calls = 100000
		for range calls {
			if _, err := prog.Run(context.Background(), "score_linear", in); err != nil {
				Fail(err.Error())
			}
		}
		c := prog.Counters()
		Expect(c.Calls).To(Equal(int64(calls)))
		Expect(c.BoundaryValidations).To(Equal(int64(3 * calls)))
		// Op results per call, counted by hand from the source: MatMul, +b,
		// the copy to logits (3); rounds 0 and 2: the literal 0.5, *, copy
		// (3 each); rounds 1 and 3: Tanh, copy (2 each); Softmax, copy to
		// probs, Argmax, copy to classes (4). 3 + 6 + 4 + 4 = 17.
		Expect(c.ResultValidations).To(Equal(int64(17 * calls)))
		Expect(c.FactQueries).To(Equal(c.BoundaryValidations + c.ResultValidations))
		Expect(c.FactRequeries).To(BeZero())
		Expect(c.ArenaAllocs).To(BeNumerically(">", 0))
		Expect(c.ArenaReleases).To(Equal(c.ArenaAllocs))
		Expect(c.FallbackRuns).To(BeZero())
	})

	It("counts a failed call's validations and still releases its arena", func() {
		_, p := parse("ops.rx", readTestdata("ops.rx"))
		prog := compile(p)
		_, err := prog.Run(context.Background(), "ints", map[string]*tensor.Tensor{"n": tensor.Scalar(1), "d": tensor.Scalar(0)})
		Expect(err).To(HaveOccurred())
		_, err = prog.Run(context.Background(), "axis", map[string]*tensor.Tensor{"a": tensor.NewFloat32(3, 3)})
		Expect(err).To(HaveOccurred())
		c := prog.Counters()
		Expect(c.Calls).To(Equal(int64(2)))
		Expect(c.BoundaryValidations).To(Equal(int64(3))) // n, d; then a fails
		Expect(c.ResultValidations).To(BeZero())
		Expect(c.ArenaReleases).To(Equal(c.ArenaAllocs))
	})

	It("serves concurrent calls, each with its own context", func() {
		_, p := parse("score_linear.rx", readTestdata("score_linear.rx"))
		prog := compile(p)
		want := run(prog, "score_linear", linearInputs(16))
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for range 200 {
					r, err := prog.Run(context.Background(), "score_linear", linearInputs(16))
					Expect(err).NotTo(HaveOccurred())
					Expect(r.Outputs["probs"].F32).To(Equal(want["probs"].F32))
				}
			}()
		}
		wg.Wait()
		c := prog.Counters()
		Expect(c.ArenaReleases).To(Equal(c.ArenaAllocs))
	})

	It("counts every call of many concurrent callers, read while they run and after Close", func() {
		_, p := parse("score_linear.rx", readTestdata("score_linear.rx"))
		prog, err := native.Compile(context.Background(), p, native.Options{CacheDir: suiteCache})
		Expect(err).NotTo(HaveOccurred())
		in := linearInputs(1)
		const callers, calls = 8, 300 // more callers than the frame pool keeps
		var wg sync.WaitGroup
		for range callers {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for range calls {
					_, err := prog.Run(context.Background(), "score_linear", in)
					Expect(err).NotTo(HaveOccurred())
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		last, reads := int64(0), 0
		for running := true; running; reads++ {
			select {
			case <-done:
				running = false
			default:
			}
			n := prog.Counters().Calls
			Expect(n).To(BeNumerically("<=", callers*calls))
			Expect(n).To(BeNumerically(">=", last), "the count never goes down while calls run (read %d)", reads)
			last = n
		}
		c := prog.Counters()
		Expect(c.Calls).To(Equal(int64(callers * calls)))
		Expect(c.ResultValidations).To(Equal(int64(17 * callers * calls)))
		Expect(c.ArenaReleases).To(Equal(c.ArenaAllocs))
		Expect(prog.Close()).To(Succeed())
		Expect(prog.Counters()).To(Equal(c))
	})

	It("calls a function without results and returns an empty Result", func() {
		prog := compile(&ir.Program{File: "empty.rx", Funcs: []*ir.Func{{Name: "empty", Pos: "empty.rx:1:1"}}})
		defer prog.Close()
		for range 3 {
			r, err := prog.Run(context.Background(), "empty", nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Outputs).To(BeNil())
			Expect(r.Path).To(Equal(executor.Native))
		}
		Expect(prog.Counters().Calls).To(Equal(int64(3)))
		_, err := prog.Run(context.Background(), "empty", map[string]*tensor.Tensor{"x": tensor.Scalar(1)})
		Expect(err).To(MatchError(ContainSubstring("unknown input x")))
	})

	It("runs the function each call names when calls alternate between functions", func() {
		_, p := parse("two.rx", `package p

func double(x [N]float32) (y [N]float32) {
	y = x * 2.0
	return
}

func triple(x [N]float32) (y [N]float32) {
	y = x * 3.0
	return
}
`)
		prog := compile(p)
		in := map[string]*tensor.Tensor{"x": f32(sh(2), 1, -4)}
		for i := range 6 {
			fn, k := "double", float32(2)
			if i%2 == 1 {
				fn, k = "triple", 3
			}
			Expect(run(prog, fn, in)["y"].F32).To(Equal([]float32{k, -4 * k}), "call %d: %s", i, fn)
			_, err := prog.Run(context.Background(), fn+"x", in)
			Expect(err).To(MatchError(native.ErrUnknownFunc))
		}
	})

	It("does not run after Close and unloads once", func() {
		_, p := parse("boundary.rx", readTestdata("boundary.rx"))
		prog, err := native.Compile(context.Background(), p, native.Options{CacheDir: suiteCache})
		Expect(err).NotTo(HaveOccurred())
		Expect(prog.Close()).To(Succeed())
		Expect(prog.Close()).To(Succeed())
		_, err = prog.Run(context.Background(), "two", boundaryInputs())
		Expect(err).To(MatchError(native.ErrClosed))
	})

	It("checks the context before calling and rejects unknown functions", func() {
		_, p := parse("boundary.rx", readTestdata("boundary.rx"))
		prog := compile(p)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := prog.Run(ctx, "two", boundaryInputs())
		Expect(err).To(MatchError(context.Canceled))
		_, err = prog.Run(context.Background(), "three", boundaryInputs())
		Expect(err).To(MatchError(native.ErrUnknownFunc))
	})
})
