package isolate_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/isolate"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Three one-function programs for the pool specs.
const (
	expSrc = `package p

func e(x [B][4]float32) (y [B][4]float32) {
	y = Exp(x) * 0.5
	return
}
`
	tanhSrc = `package p

func t(x [B][4]float32) (y [B][4]float32) {
	y = Tanh(x) + 1
	return
}
`
	bothSrc = `package p

func e(x [B][4]float32) (y [B][4]float32) {
	y = Exp(x) * 0.5
	return
}

func t(x [B][4]float32) (y [B][4]float32) {
	y = Tanh(x) + 1
	return
}
`
	plainSrc = `package p

func t(x [B][4]float32) (y [B][4]float32) {
	y = x * 0.25
	return
}
`
)

func lower(name, src string) (*program.File, *ir.Program) {
	GinkgoHelper()
	f, err := program.Parse(name, []byte(src))
	Expect(err).NotTo(HaveOccurred())
	p, err := program.Lower(f)
	Expect(err).NotTo(HaveOccurred())
	return f, p
}

func poolInput() map[string]*tensor.Tensor {
	return map[string]*tensor.Tensor{"x": tensor.FromFloat32([]float32{-2, -0.5, 0, 1.5, 3, 0.25, -1, 2}, 2, 4)}
}

// pooled returns e with a pool of its own, closed after the spec.
func pooled(e isolate.Executor) isolate.Executor {
	e.Pool = isolate.NewPool()
	DeferCleanup(e.Pool.Close)
	return e
}

// faultObject compiles testdata/NAME.c into an object for CC.
func faultObject(name string) string {
	GinkgoHelper()
	obj := filepath.Join(GinkgoT().TempDir(), name+".o")
	out, err := exec.Command("cc", "-c", "-fPIC", "-O0", "-o", obj, filepath.Join("testdata", name+".c")).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	return obj
}

var _ = Describe("an isolated executor with a Pool", Label("native"), func() {
	BeforeEach(needCC)
	ctx := context.Background()

	It("prepares prebuilt programs from one library in one worker, computing what a worker per program computes", func() {
		e := pooled(workerExecutor(""))
		fe, pe := lower("e.rx", expSrc)
		ft, pt := lower("t.rx", tanhSrc)
		Expect(e.Prebuild(ctx, []*ir.Program{pe, pt})).To(Succeed())
		a, err := e.Prepare(ctx, fe, pe)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(a.Close)
		b, err := e.Prepare(ctx, ft, pt)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(b.Close)
		la, lb := a.(executor.Built).Info().Library, b.(executor.Built).Info().Library
		Expect(la).To(Equal(lb), "both from the batch's library")
		Expect(filepath.Base(la)).To(HavePrefix("batch-"))

		for _, c := range []struct {
			pr   executor.Prepared
			fn   string
			f    *program.File
			p    *ir.Program
			want func(float64) float64
		}{{a, "e", fe, pe, func(x float64) float64 { return math.Exp(x) * 0.5 }}, {b, "t", ft, pt, func(x float64) float64 { return math.Tanh(x) + 1 }}} {
			got, err := c.pr.Run(ctx, c.fn, poolInput())
			Expect(err).NotTo(HaveOccurred())
			alone := prepareProgram(workerExecutor(""), c.f, c.p)
			want, err := alone.Run(ctx, c.fn, poolInput())
			Expect(err).NotTo(HaveOccurred())
			for i, v := range got.Outputs["y"].F32 {
				Expect(math.Float32bits(v)).To(Equal(math.Float32bits(want.Outputs["y"].F32[i])), "%s y[%d]", c.fn, i)
				Expect(float64(v)).To(BeNumerically("~", c.want(float64(poolInput()["x"].F32[i])), 1e-6))
			}
			Expect(c.pr.(executor.Built).Source()).To(Equal(alone.(executor.Built).Source()))
		}
	})

	It("does not blame a program for a crash an earlier program's call caused: the call runs again alone", func() {
		obj := faultObject("fault_state")
		e := workerExecutor("")
		e.Options.CC = "cc -Wl,--wrap=exp -Wl,--wrap=tanh " + obj
		e.Options.ISA = "c"
		By("checking the fault: Tanh crashes after Exp in one process")
		fe, pe := lower("e.rx", expSrc)
		ft, pt := lower("t.rx", tanhSrc)
		single := prepareProgram(e, ft, pt)
		_, err := single.Run(ctx, "t", poolInput())
		Expect(err).NotTo(HaveOccurred(), "alone, Tanh runs")

		e = pooled(e)
		Expect(e.Prebuild(ctx, []*ir.Program{pe, pt})).To(Succeed())
		a := prepareProgram(e, fe, pe)
		b := prepareProgram(e, ft, pt)
		_, err = a.Run(ctx, "e", poolInput())
		Expect(err).NotTo(HaveOccurred())
		got, err := b.Run(ctx, "t", poolInput())
		Expect(err).NotTo(HaveOccurred(), "the shared worker crashed for the Exp program's doing; alone the call succeeds")
		Expect(float64(got.Outputs["y"].F32[3])).To(BeNumerically("~", math.Tanh(1.5)+1, 1e-6))
		By("and the program whose worker died runs again")
		got, err = a.Run(ctx, "e", poolInput())
		Expect(err).NotTo(HaveOccurred())
		Expect(float64(got.Outputs["y"].F32[3])).To(BeNumerically("~", math.Exp(1.5)*0.5, 1e-5))

		By("still blaming a program for what its own earlier calls did: they run again first")
		fb, pb := lower("both.rx", bothSrc)
		own := prepareProgram(isolate.Executor{Options: e.Options, Command: e.Command, Env: e.Env}, fb, pb)
		_, err = own.Run(ctx, "e", poolInput())
		Expect(err).NotTo(HaveOccurred())
		_, want := own.Run(ctx, "t", poolInput())
		Expect(errors.Is(want, isolate.ErrCrashed)).To(BeTrue(), "in a worker of its own, t crashes after e: %v", want)
		fp, pp := lower("p.rx", plainSrc)
		p := prepareProgram(e, fp, pp)
		_, err = p.Run(ctx, "t", poolInput())
		Expect(err).NotTo(HaveOccurred())
		both := prepareProgram(e, fb, pb)
		_, err = both.Run(ctx, "e", poolInput())
		Expect(err).NotTo(HaveOccurred())
		_, err = both.Run(ctx, "t", poolInput())
		Expect(errors.Is(err, isolate.ErrCrashed)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(HavePrefix("native crashed: signal SIGSEGV"))
	})

	It("fails only the crashing program of a batch, with the crash it has alone", func() {
		e := pooled(workerExecutor("segv"))
		fp, pp := lower("p.rx", plainSrc)
		ft, pt := lower("t.rx", tanhSrc)
		Expect(e.Prebuild(ctx, []*ir.Program{pp, pt})).To(Succeed())
		p := prepareProgram(e, fp, pp)
		t := prepareProgram(e, ft, pt)
		_, err := p.Run(ctx, "t", poolInput())
		Expect(err).NotTo(HaveOccurred())
		_, err = t.Run(ctx, "t", poolInput())
		Expect(errors.Is(err, isolate.ErrCrashed)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(HavePrefix("native crashed: signal SIGSEGV"))
		got, err := p.Run(ctx, "t", poolInput())
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Outputs["y"].F32[3]).To(Equal(float32(0.375)))
		_, err = t.Run(ctx, "t", poolInput())
		Expect(errors.Is(err, isolate.ErrCrashed)).To(BeTrue(), "%v", err)
	})

	It("times out a hung call with the timeout's text, and the other programs go on", func() {
		e := workerExecutor("hang")
		e.Timeout = 300 * time.Millisecond
		e = pooled(e)
		fp, pp := lower("p.rx", plainSrc)
		ft, pt := lower("t.rx", tanhSrc)
		Expect(e.Prebuild(ctx, []*ir.Program{pp, pt})).To(Succeed())
		p := prepareProgram(e, fp, pp)
		t := prepareProgram(e, ft, pt)
		_, err := p.Run(ctx, "t", poolInput())
		Expect(err).NotTo(HaveOccurred())
		_, err = t.Run(ctx, "t", poolInput())
		Expect(errors.Is(err, isolate.ErrTimedOut)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(Equal("native timed out after 300ms"))
		got, err := p.Run(ctx, "t", poolInput())
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Outputs["y"].F32[3]).To(Equal(float32(0.375)))
	})

	It("gives a program whose batch fails to build the error it has alone, and builds the others", func() {
		dir := GinkgoT().TempDir()
		// A compiler with a planted bug: it refuses to build in a directory
		// whose C calls the Tanh kernel.
		cc := filepath.Join(dir, "buggy-cc")
		Expect(os.WriteFile(cc, []byte(`#!/bin/sh
if grep -q 'rx_tanh(' *.c 2>/dev/null; then echo "rx_gen.c:7:3: error: planted compiler bug" >&2; exit 1; fi
exec cc "$@"
`), 0o755)).To(Succeed())
		e := workerExecutor("")
		e.Options.CC = cc
		_, pt := lower("t.rx", tanhSrc)
		_, alone := e.Prepare(ctx, nil, pt)
		Expect(errors.Is(alone, native.ErrCompiler)).To(BeTrue(), "%v", alone)

		e = pooled(e)
		fe, pe := lower("e.rx", expSrc)
		Expect(e.Prebuild(ctx, []*ir.Program{pe, pt})).To(Succeed())
		_, err := e.Prepare(ctx, nil, pt)
		Expect(errors.Is(err, native.ErrCompiler)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(Equal(alone.Error()))
		a := prepareProgram(e, fe, pe)
		_, err = a.Run(ctx, "e", poolInput())
		Expect(err).NotTo(HaveOccurred())
	})

	It("starts one shared worker when many programs are prepared at once", func() {
		e := pooled(workerExecutor(""))
		srcs := []string{expSrc, tanhSrc, plainSrc, bothSrc}
		errs := make(chan error, 2*len(srcs))
		for i := range 2 * len(srcs) {
			f, p := lower(fmt.Sprintf("p%d.rx", i), srcs[i%len(srcs)])
			go func() {
				defer GinkgoRecover()
				pr, err := e.Prepare(ctx, f, p)
				if err == nil {
					DeferCleanup(pr.Close)
				}
				errs <- err
			}()
		}
		for range 2 * len(srcs) {
			Expect(<-errs).To(Succeed())
		}
		Expect(isolate.PoolWorkers(e.Pool)).To(Equal(1))
	})

	It("keeps a program that a Prebuild running at the same time no longer lists", func() {
		e := pooled(workerExecutor(""))
		fe, pe := lower("e.rx", expSrc)
		_, pt := lower("t.rx", tanhSrc)
		Expect(e.Prebuild(ctx, []*ir.Program{pe})).To(Succeed())
		// The Prebuild of t releases the programs no handle uses; it runs
		// after Prepare found e in the worker, before Prepare returns.
		isolate.SetAfterLookup(e.Pool, func() {
			isolate.SetAfterLookup(e.Pool, nil)
			Expect(e.Prebuild(ctx, []*ir.Program{pt})).To(Succeed())
		})
		a := prepareProgram(e, fe, pe)
		got, err := a.Run(ctx, "e", poolInput())
		Expect(err).NotTo(HaveOccurred())
		Expect(float64(got.Outputs["y"].F32[3])).To(BeNumerically("~", math.Exp(1.5)*0.5, 1e-5))
	})

	It("fails a call that Close interrupts with ErrClosed, not as a crash", func() {
		e := workerExecutor("hang")
		e.Timeout = time.Minute
		e = pooled(e)
		ft, pt := lower("t.rx", tanhSrc)
		t := prepareProgram(e, ft, pt)
		done := make(chan error, 1)
		go func() {
			_, err := t.Run(ctx, "t", poolInput())
			done <- err
		}()
		time.Sleep(300 * time.Millisecond)
		Expect(e.Pool.Close()).To(Succeed())
		var err error
		Eventually(done, 10*time.Second).Should(Receive(&err))
		Expect(errors.Is(err, native.ErrClosed)).To(BeTrue(), "%v", err)
		Expect(errors.Is(err, isolate.ErrCrashed)).To(BeFalse(), "%v", err)
	})

	It("refuses a second executor configuration and fails after Close", func() {
		e := pooled(workerExecutor(""))
		fp, pp := lower("p.rx", plainSrc)
		prepareProgram(e, fp, pp)
		other := workerExecutor("segv")
		other.Pool = e.Pool
		_, err := other.Prepare(ctx, fp, pp)
		Expect(errors.Is(err, executor.ErrExecutor)).To(BeTrue(), "%v", err)
		Expect(e.Pool.Close()).To(Succeed())
		_, err = e.Prepare(ctx, fp, pp)
		Expect(errors.Is(err, native.ErrClosed)).To(BeTrue(), "%v", err)
	})
})

// prepareProgram prepares p with e and closes it after the spec.
func prepareProgram(e executor.Executor, f *program.File, p *ir.Program) executor.Prepared {
	GinkgoHelper()
	pr, err := e.Prepare(context.Background(), f, p)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(pr.Close)
	return pr
}
