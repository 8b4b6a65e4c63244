package isolate_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/isolate"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

const batch, feat, classes = 2, 8, 4

// twoInputs are fixed inputs of testdata/two.rx's functions.
func twoInputs() map[string]*tensor.Tensor {
	x := tensor.NewFloat32(batch, feat)
	for i := range batch {
		for k := range feat {
			x.F32[i*feat+k] = float32(i+1) * 0.25 * (float32(k) - 3.5)
		}
	}
	w := tensor.NewFloat32(feat, classes)
	for k := range feat {
		for c := range classes {
			w.F32[k*classes+c] = 0.125*float32(k+1) - 0.25*float32(c)
		}
	}
	return map[string]*tensor.Tensor{"x": x, "w": w}
}

// plainWant computes plain's logits (0.5·x·w) in float64, independently.
func plainWant(in map[string]*tensor.Tensor) []float64 {
	x, w := in["x"].F32, in["w"].F32
	out := make([]float64, batch*classes)
	for i := range batch {
		for c := range classes {
			s := 0.0
			for k := range feat {
				s += float64(x[i*feat+k]) * float64(w[k*classes+c])
			}
			out[i*classes+c] = 0.5 * s
		}
	}
	return out
}

func prepare(e executor.Executor, path string) executor.Prepared {
	f, p := load(path)
	pr, err := e.Prepare(context.Background(), f, p)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(pr.Close)
	return pr
}

var _ = Describe("the isolated native executor", Label("native"), func() {
	BeforeEach(needCC)

	It("is named native and computes what the in-process backend computes, bit for bit", func() {
		iso := workerExecutor("")
		Expect(iso.Name()).To(Equal(executor.Name("native")))
		pr := prepare(iso, "testdata/two.rx")
		inproc := prepare(native.Executor{Options: native.Options{CacheDir: cacheDir}}, "testdata/two.rx")
		in := twoInputs()

		got, err := pr.Run(context.Background(), "plain", in)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Path).To(Equal(executor.Name("native")))
		want := plainWant(in)
		for i, v := range got.Outputs["logits"].F32 {
			Expect(float64(v)).To(BeNumerically("~", want[i], 1e-5), "logits[%d]", i)
		}
		// By hand: row 0 of 0.5·x·w is 0.5·Σk 0.25(k-3.5)(0.125(k+1) - 0.25c)
		// = 0.5·0.25·0.125·Σk (k-3.5)(k+1) = 0.015625·42 = 0.65625 for every c.
		Expect(float64(got.Outputs["logits"].F32[0])).To(BeNumerically("~", 0.65625, 1e-6))
		Expect(got.Outputs["classes"].I64).To(Equal([]int64{0, 0}))

		for _, fn := range []string{"plain", "squash"} {
			a, err := pr.Run(context.Background(), fn, in)
			Expect(err).NotTo(HaveOccurred())
			b, err := inproc.Run(context.Background(), fn, in)
			Expect(err).NotTo(HaveOccurred())
			Expect(a.Outputs).To(HaveLen(len(b.Outputs)))
			for name, t := range b.Outputs {
				Expect(a.Outputs[name].Shape).To(Equal(t.Shape), name)
				Expect(a.Outputs[name].DType).To(Equal(t.DType), name)
				for i := range t.F32 {
					Expect(math.Float32bits(a.Outputs[name].F32[i])).To(Equal(math.Float32bits(t.F32[i])), "%s %s[%d]", fn, name, i)
				}
				Expect(a.Outputs[name].I64).To(Equal(t.I64), name)
			}
		}
		np, ok := pr.(executor.Built)
		Expect(ok).To(BeTrue())
		Expect(string(np.Source())).To(ContainSubstring(native.CFuncName("squash")))
		Expect(np.Info().Compiler).NotTo(BeEmpty())
		Expect(np.Info().Library).To(HavePrefix(cacheDir))
	})

	It("returns runtime errors with the in-process kind and text", func() {
		pr := prepare(workerExecutor(""), "../scenarios/error.rx")
		inproc := prepare(native.Executor{Options: native.Options{CacheDir: cacheDir}}, "../scenarios/error.rx")
		x, w := tensor.NewFloat32(3, 32), tensor.NewFloat32(32, 8)
		in := map[string]*tensor.Tensor{"x": x, "w": w, "divisor": tensor.Scalar(0)}

		_, got := pr.Run(context.Background(), "score_divisor", in)
		_, want := inproc.Run(context.Background(), "score_divisor", in)
		Expect(want).To(HaveOccurred())
		var re *ir.RuntimeError
		Expect(errors.As(got, &re)).To(BeTrue(), "%v", got)
		Expect(re.Kind).To(BeIdenticalTo(ir.ErrDivisionByZero))
		Expect(got.Error()).To(Equal(want.Error()))
		Expect(got.Error()).To(ContainSubstring("score_divisor: CheckedRem: division by zero (round_idx=0) at ../scenarios/error.rx:"))
		ok, msg := compare.Errors(want, got)
		Expect(ok).To(BeTrue(), msg)

		in["w"] = tensor.NewFloat32(31, 8) // a boundary error
		_, got = pr.Run(context.Background(), "score_divisor", in)
		_, want = inproc.Run(context.Background(), "score_divisor", in)
		Expect(errors.Is(got, ir.ErrShape)).To(BeTrue(), "%v", got)
		Expect(got.Error()).To(Equal(want.Error()))

		_, got = pr.Run(context.Background(), "nope", in)
		Expect(errors.Is(got, native.ErrUnknownFunc)).To(BeTrue(), "%v", got)
	})

	It("reports build errors from the worker with their kind", func() {
		e := workerExecutor("")
		e.Options.CC = "rxeq-no-such-compiler"
		f, p := load("testdata/two.rx")
		_, err := e.Prepare(context.Background(), f, p)
		Expect(errors.Is(err, native.ErrCompiler)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(`CC="rxeq-no-such-compiler" not found`))
	})

	It("serves concurrent Runs correctly", func() {
		pr := prepare(workerExecutor(""), "testdata/two.rx")
		in := twoInputs()
		want := plainWant(in)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				out, err := pr.Run(context.Background(), "plain", in)
				if err == nil && math.Abs(float64(out.Outputs["logits"].F32[5])-want[5]) > 1e-5 {
					err = errors.New("wrong logits")
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			Expect(err).NotTo(HaveOccurred())
		}
	})

	DescribeTable("turns a crash in generated code into an error of that call, and recovers",
		func(fault, signal, text string) {
			pr := prepare(workerExecutor(fault), "testdata/two.rx")
			in := twoInputs()
			for range 2 { // the second crash is in a restarted worker
				out, err := pr.Run(context.Background(), "squash", in)
				Expect(errors.Is(err, isolate.ErrCrashed)).To(BeTrue(), "%v", err)
				Expect(errors.Is(err, executor.ErrCrashed)).To(BeTrue(), "%v", err)
				var pe *executor.ProcessError
				Expect(errors.As(err, &pe)).To(BeTrue(), "%v", err)
				Expect(pe.Executor).To(Equal(executor.Native))
				Expect(pe.Signal).To(Equal(signal)) // reported by the worker's Go runtime, which then exits 2
				Expect(err.Error()).To(HavePrefix(text))
				Expect(out.Path).To(Equal(executor.Name("native")))
				if fault == "abort" {
					Expect(err.Error()).To(ContainSubstring("fault_abort: tanh("))
				}
				got, err := pr.Run(context.Background(), "plain", in)
				Expect(err).NotTo(HaveOccurred())
				Expect(float64(got.Outputs["logits"].F32[0])).To(BeNumerically("~", 0.65625, 1e-6))
			}
		},
		Entry("segfault", "segv", "SIGSEGV", "native crashed: signal SIGSEGV"),
		Entry("abort", "abort", "SIGABRT", "native crashed: signal SIGABRT"),
	)

	It("kills a hung call at the timeout, recovers, and leaks no goroutine", func() {
		before := runtime.NumGoroutine()
		e := workerExecutor("hang")
		e.Timeout = 300 * time.Millisecond
		pr := prepare(e, "testdata/two.rx")
		_, err := pr.Run(context.Background(), "squash", twoInputs())
		Expect(errors.Is(err, isolate.ErrTimedOut)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(Equal("native timed out after 300ms"))
		_, err = pr.Run(context.Background(), "plain", twoInputs())
		Expect(err).NotTo(HaveOccurred())
		Expect(pr.Close()).To(Succeed())
		Eventually(runtime.NumGoroutine).WithTimeout(3 * time.Second).Should(BeNumerically("<=", before))
	})

	It("reports a call queued behind a hung one as not run, naming it, and runs the next call in a new worker", func() {
		e := workerExecutor("hang")
		e.Timeout = 1500 * time.Millisecond
		pr := prepare(e, "testdata/two.rx")
		hung := make(chan error, 1)
		go func() {
			_, err := pr.Run(context.Background(), "squash", twoInputs())
			hung <- err
		}()
		time.Sleep(300 * time.Millisecond) // the hanging call takes the worker

		ctx, cancel := context.WithTimeout(executor.WithCase(context.Background(), "isolate-two-funcs/plain/b2/native"), 300*time.Millisecond)
		defer cancel()
		_, err := pr.Run(ctx, "plain", twoInputs())
		Expect(errors.Is(err, executor.ErrNotRun)).To(BeTrue(), "%v", err)
		Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue(), "%v", err)
		Expect(errors.Is(err, isolate.ErrTimedOut)).To(BeFalse(), "%v", err)
		// The hanging call has no case name in its ctx (executor.WithCase),
		// so it is named by its function and inputs.
		Expect(err.Error()).To(MatchRegexp(`^not run: the native worker was busy with squash\(w \[8 4\], x \[2 8\]\) \(running for [0-9.]+m?s\) until this case's deadline: context deadline exceeded$`))

		Expect(<-hung).To(MatchError(isolate.ErrTimedOut))
		got, err := pr.Run(context.Background(), "plain", twoInputs())
		Expect(err).NotTo(HaveOccurred())
		Expect(float64(got.Outputs["logits"].F32[0])).To(BeNumerically("~", 0.65625, 1e-6))
	})

	It("kills a hung call when ctx ends", func() {
		pr := prepare(workerExecutor("hang"), "testdata/two.rx")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := pr.Run(ctx, "squash", twoInputs())
		Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue(), "%v", err)
		Expect(errors.Is(err, isolate.ErrCrashed)).To(BeFalse())
	})

	It("leaves the normal build cache usable after fault builds", func() {
		for _, fault := range []string{"segv", "abort"} {
			pr := prepare(workerExecutor(fault), "testdata/two.rx")
			_, err := pr.Run(context.Background(), "squash", twoInputs())
			Expect(err).To(HaveOccurred())
		}
		pr := prepare(native.Executor{Options: native.Options{CacheDir: cacheDir}}, "testdata/two.rx")
		out, err := pr.Run(context.Background(), "squash", twoInputs())
		Expect(err).NotTo(HaveOccurred())
		// squash row 0: tanh(0.65625·2) = tanh(1.3125) for every class
		// (logits before the 0.5 are 1.3125), softmax of equal values = 1/4.
		Expect(float64(out.Outputs["logits"].F32[0])).To(BeNumerically("~", math.Tanh(1.3125), 1e-6))
		Expect(float64(out.Outputs["probs"].F32[0])).To(BeNumerically("~", 0.25, 1e-6))
	})
})

var _ = Describe("a harness run with a crashing function", Label("native"), func() {
	BeforeEach(needCC)

	It("fails only the crashing cases and completes the rest", func() {
		f, _ := load("testdata/two.rx")
		opts := harness.Options{Executors: []executor.Executor{fallback.Executor{}, workerExecutor("segv")}, SkipLocks: true}
		res, err := harness.Run(context.Background(), []*program.File{f}, opts)
		Expect(err).NotTo(HaveOccurred())
		seen := map[string]int{}
		for _, c := range res.Cases {
			key := c.Function + "/" + string(c.Executor)
			seen[key]++
			if key == "squash/native" {
				Expect(c.Status).NotTo(Equal(harness.StatusPass), c.Name())
				Expect(c.Message).To(ContainSubstring("native crashed: signal SIGSEGV"), c.Name())
				continue
			}
			Expect(c.Status).To(Equal(harness.StatusPass), "%s: %s", c.Name(), c.Message)
		}
		// batches 1 and 4: every function × executor ran at both.
		Expect(seen).To(Equal(map[string]int{"squash/oracle": 2, "squash/fallback": 2, "squash/native": 2,
			"plain/oracle": 2, "plain/fallback": 2, "plain/native": 2}))
	})
})

var _ = Describe("a harness run with a hanging function", Label("native"), func() {
	BeforeEach(needCC)

	// run runs two.rx through fallback and e, one case at a time.
	run := func(e isolate.Executor, caseTimeout time.Duration) *harness.Result {
		f, _ := load("testdata/two.rx")
		opts := harness.Options{Executors: []executor.Executor{fallback.Executor{}, e}, SkipLocks: true,
			Parallel: 1, CaseTimeout: caseTimeout}
		res, err := harness.Run(context.Background(), []*program.File{f}, opts)
		Expect(err).NotTo(HaveOccurred())
		return res
	}

	It("reports the worker's timeout as a timeout of the case, as in process, never as an error to compare", func() {
		e := workerExecutor("hang")
		e.Timeout = 500 * time.Millisecond
		res := run(e, 5*time.Second)
		n := 0
		for _, c := range res.Cases {
			if c.Function == "squash" && c.Executor == executor.Native {
				n++
				Expect(c.Status).To(Equal(harness.StatusError), "%s: %s", c.Name(), c.Message)
				Expect(c.Message).To(Equal("case timed out: native timed out after 500ms"), c.Name())
			}
		}
		Expect(n).To(Equal(2))
	})

	It("restarts the killed worker before the next case's clock starts, so a slow restart does not cost that case its run", func() {
		// Every start of the worker after the first sleeps 4s, twice the
		// case timeout (2s): the restart after squash's hang is squash's
		// doing, and the plain cases after it run and pass.
		e := workerExecutor("hang")
		e.Timeout = 500 * time.Millisecond
		marker := filepath.Join(GinkgoT().TempDir(), "started")
		e.Command = []string{"/bin/sh", "-c", `if [ -e "$1" ]; then sleep 4; else : > "$1"; fi; exec "$2"`, "sh", marker, self}
		res := run(e, 2*time.Second)
		for _, c := range res.Cases {
			if c.Function == "plain" {
				Expect(c.Status).To(Equal(harness.StatusPass), "%s: %s", c.Name(), c.Message)
			}
		}
	})
})
