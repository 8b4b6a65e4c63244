package external_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/external"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// fake returns an external executor named "fake" whose process is this
// test binary serving the protocol (external.ServeFakeExecutor), broken in
// the given mode on function bad.
func fake(mode, bad string) *external.Executor {
	self, err := os.Executable()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	e, err := external.New(external.Options{
		Name:    "fake",
		Command: []string{self},
		Env:     []string{external.FakeExecutorEnv + "=" + mode, external.FakeBadFuncEnv + "=" + bad},
	})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	DeferCleanup(e.Close)
	return e
}

// withFake runs the tiny scenario through the fallback interpreter and e.
func withFake(e executor.Executor) *harness.Result {
	res, err := harness.Run(context.Background(), []*program.File{tinyFile()},
		harness.Options{Executors: []executor.Executor{fallback.Executor{}, e}, Parallel: 2})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return res
}

// tinyPrepared prepares the tiny scenario on e.
func tinyPrepared(e executor.Executor) executor.Prepared {
	f := tinyFile()
	p, err := program.Lower(f)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	pr, err := e.Prepare(context.Background(), f, p)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	DeferCleanup(pr.Close)
	return pr
}

func tinyInputs(fn string, batch int) map[string]*tensor.Tensor {
	f := tinyFile()
	in, err := harness.GenerateInputs(f, f.Func(fn), batch, 7, nil)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return in
}

var _ = Describe("an external executor", func() {
	It("runs every case of a program and agrees with the oracle when it follows the protocol", func() {
		res := withFake(fake("ok", ""))
		Expect(res.OK()).To(BeTrue(), "%+v", res.Cases)
		fk := byExecutor(res.Cases, "fake")
		Expect(fk).To(HaveLen(6))
		for _, c := range fk {
			Expect(c.Status).To(Equal(harness.StatusPass), c.Message)
			Expect(c.Path).To(Equal(executor.Name("fake")))
		}
	})

	It("restarts after a crash and serves the next call", func() {
		pr := tinyPrepared(fake("crash", "lin"))
		_, err := pr.Run(context.Background(), "sq", tinyInputs("sq", 4))
		Expect(err).NotTo(HaveOccurred())
		_, err = pr.Run(context.Background(), "lin", tinyInputs("lin", 4))
		Expect(err).To(MatchError(external.ErrCrashed))
		Expect(err).To(MatchError(executor.ErrCrashed))
		var pe *executor.ProcessError
		Expect(errors.As(err, &pe)).To(BeTrue(), "%v", err)
		Expect(pe.Executor).To(Equal(executor.Name("fake")))
		Expect(pe.External).To(BeTrue())
		Expect(pe.Signal).To(BeEmpty())
		Expect(pe.ExitCode).To(Equal(3))
		Expect(pe.While).To(Equal("the result of lin"))
		Expect(err.Error()).To(HavePrefix("external executor crashed: fake, while waiting for the result of lin: exit status 3\nexecutor stderr (tail):\n"))
		Expect(err.Error()).To(ContainSubstring("exit status 3"))
		Expect(err.Error()).To(ContainSubstring("crashing on purpose")) // the stderr tail
		out, err := pr.Run(context.Background(), "sq", tinyInputs("sq", 4))
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Outputs).To(HaveKey("y"))
	})

	It("kills a process that has not answered when the context ends, and the next call gets a new one", func() {
		pr := tinyPrepared(fake("hang", "lin"))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := pr.Run(ctx, "lin", tinyInputs("lin", 1))
		Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("fake killed while waiting for the result of lin"))
		_, err = pr.Run(context.Background(), "sq", tinyInputs("sq", 1))
		Expect(err).NotTo(HaveOccurred())
	})

	It("reports a call whose deadline comes while it waits behind another as not run, naming that one", func() {
		pr := tinyPrepared(fake("hang", "lin"))
		hung := make(chan error, 1)
		hangCtx, stopHang := context.WithCancel(executor.WithCase(context.Background(), "tiny/lin/b1/fake"))
		defer stopHang()
		go func() {
			_, err := pr.Run(hangCtx, "lin", tinyInputs("lin", 1))
			hung <- err
		}()
		time.Sleep(200 * time.Millisecond) // the hanging call takes the process
		ctx, cancel := context.WithTimeout(executor.WithCase(context.Background(), "tiny/sq/b1/fake"), 300*time.Millisecond)
		defer cancel()
		_, err := pr.Run(ctx, "sq", tinyInputs("sq", 1))
		Expect(err).To(MatchError(executor.ErrNotRun))
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Expect(err.Error()).To(MatchRegexp(`^not run: the external executor fake was busy with tiny/lin/b1/fake \(running for [0-9.]+m?s\) until this case's deadline: context deadline exceeded$`))
		stopHang()
		Eventually(hung).Should(Receive(MatchError(context.Canceled)))
	})

	It("fails a call whose context has already ended without sending it", func() {
		pr := tinyPrepared(fake("ok", ""))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := pr.Run(ctx, "sq", tinyInputs("sq", 1))
		Expect(errors.Is(err, context.Canceled)).To(BeTrue(), "%v", err)
	})

	It("checks the inputs at the call boundary with the shared texts, before the process sees them", func() {
		pr := tinyPrepared(fake("ok", ""))
		in := tinyInputs("lin", 4)
		delete(in, "w")
		_, err := pr.Run(context.Background(), "lin", in)
		Expect(err).To(MatchError(ir.ErrMissingInput))
		Expect(err.Error()).To(Equal("lin: missing input w ([4][3]float32)"))
	})

	DescribeTable("fails only the cases of the function it breaks on, with a clear message, and goes on",
		func(mode string, want ...string) {
			e := fake(mode, "lin")
			if mode == "hang" {
				var err error
				e, err = external.New(external.Options{Name: "fake", Command: e.Command(),
					Env:     []string{external.FakeExecutorEnv + "=hang", external.FakeBadFuncEnv + "=lin"},
					Timeout: time.Second})
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(e.Close)
			}
			res := withFake(e)
			for _, c := range byExecutor(res.Cases, "fake") {
				if c.Function == "sq" {
					Expect(c.Status).To(Equal(harness.StatusPass), "%s: %s", c.Name(), c.Message)
					continue
				}
				if mode == "hang" {
					// A timeout is an error of the case, as when the case
					// timeout abandons a run (harness.ErrTimeout).
					Expect(c.Status).To(Equal(harness.StatusError), c.Name())
					Expect(c.Message).To(HavePrefix("case timed out: "), c.Name())
				} else {
					Expect(c.Status).To(Equal(harness.StatusFail), c.Name())
				}
				for _, w := range want {
					// The executor's error as it is, and as the comparison
					// with the oracle quotes it.
					Expect(c.Error+"\n"+c.Message).To(ContainSubstring(w), c.Name())
				}
			}
			for _, c := range byExecutor(res.Cases, "fallback") {
				Expect(c.Status).To(Equal(harness.StatusPass))
			}
		},
		Entry("a crash", "crash", "external executor crashed: fake", "exit status 3", "crashing on purpose"),
		Entry("a hang", "hang", "external executor timed out: fake gave no answer within 1s while waiting for the result of lin (killed)"),
		Entry("text on stdout", "garbage", "executor protocol violation", "garbage on stdout", `"debu`, "Is something printing to stdout?"),
		Entry("an answer to another request", "badid", "executor protocol violation", "answered request"),
		Entry("a message of the wrong type", "badtype", "executor protocol violation", `sent a "ready" message while rxeq waited for the result of lin`),
		Entry("no input checksums", "nocrc", "executor protocol violation", "has no input_crc32 for input x"),
		Entry("a wrong dtype", "dtype", "fake returned wrong outputs for lin: output logits is float64 [", "want float32 ["),
		Entry("a wrong shape", "shape", "fake returned wrong outputs for lin: output logits is float32 [1 ", "([B][3]float32 with B="),
		Entry("a missing output", "missing", "fake returned wrong outputs for lin: no output classes (want int64 ["),
		Entry("a modified input", "mutate", "fake modified input x (CRC-32 ", "after the call) during lin"),
		Entry("an exception", "error", `the oracle succeeded but the executor failed: [unclassified] "ValueError: the fake fails on purpose"`),
	)

	It("restarts a killed process before the next case's clock starts, so a slow restart does not cost that case its run", func() {
		// lin hangs and is killed at the executor's timeout (1s); every
		// start after the first sleeps 4s, twice the case timeout (2s) but
		// within the start timeout (30s), as torchscript's import on
		// loaded cores. The restart is lin's doing: the cases after it run.
		self, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())
		marker := filepath.Join(GinkgoT().TempDir(), "started")
		e, err := external.New(external.Options{Name: "fake", Command: []string{self},
			Env: []string{external.FakeExecutorEnv + "=hang", external.FakeBadFuncEnv + "=lin",
				external.FakeSlowRestartEnv + "=4s:" + marker},
			Timeout: time.Second, StartTimeout: 30 * time.Second})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(e.Close)
		res, err := harness.Run(context.Background(), []*program.File{tinyFile()},
			harness.Options{Executors: []executor.Executor{fallback.Executor{}, e}, Parallel: 1, CaseTimeout: 2 * time.Second})
		Expect(err).NotTo(HaveOccurred())
		for _, c := range byExecutor(res.Cases, "fake") {
			if c.Function == "sq" {
				Expect(c.Status).To(Equal(harness.StatusPass), "%s: %s", c.Name(), c.Message)
			}
		}
		for _, c := range byExecutor(res.Cases, "fake") {
			if c.Function == "sq" {
				continue
			}
			// Each lin case after the first restarts the process too: it
			// runs, and times out on its own hang.
			Expect(c.Status).To(Equal(harness.StatusError), c.Name())
			Expect(c.Message).To(HavePrefix("case timed out: external executor timed out: fake gave no answer within 1s while waiting for the result of lin (killed)"), c.Name())
		}
	})

	It("reports a case whose restart fails (no hello within the start timeout) as not run, with the start's error, never as a failure", func() {
		self, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())
		marker := filepath.Join(GinkgoT().TempDir(), "started")
		e, err := external.New(external.Options{Name: "fake", Command: []string{self},
			Env: []string{external.FakeExecutorEnv + "=hang", external.FakeBadFuncEnv + "=lin",
				external.FakeSlowRestartEnv + "=1h:" + marker},
			Timeout: time.Second, StartTimeout: time.Second})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(e.Close)
		res, err := harness.Run(context.Background(), []*program.File{tinyFile()},
			harness.Options{Executors: []executor.Executor{fallback.Executor{}, e}, Parallel: 1, CaseTimeout: 30 * time.Second})
		Expect(err).NotTo(HaveOccurred())
		// An sq case before lin's first hang runs in the first process and
		// passes; every one after it finds no process and fails to start one.
		notRun := 0
		for _, c := range byExecutor(res.Cases, "fake") {
			if c.Function != "sq" || c.Status == harness.StatusPass {
				continue
			}
			notRun++
			Expect(c.Status).To(Equal(harness.StatusError), c.Name())
			Expect(c.Message).To(HavePrefix("not run: starting the external executor fake for sq: external executor did not start: fake ("), c.Name())
			Expect(c.Message).To(ContainSubstring("gave no answer within 1s while waiting for its hello"), c.Name())
		}
		Expect(notRun).To(BeNumerically(">", 0))
	})

	It("reports a function it does not list in its hello as skipped, with the reason, never as passed", func() {
		res := withFake(fake("unserved", ""))
		Expect(res.OK()).To(BeTrue())
		Expect(res.Skipped()).To(Equal(3))
		pass, fail, errored := res.Counts()
		Expect([]int{pass, fail, errored}).To(Equal([]int{6 + 6 + 3, 0, 0})) // oracle, fallback, fake's lin
		for _, c := range byExecutor(res.Cases, "fake") {
			if c.Function == "sq" {
				Expect(c.Status).To(Equal(harness.StatusSkip))
				Expect(c.Message).To(Equal("function not served: fake does not serve sq (it serves lin)"))
				Expect(c.Error).To(BeEmpty())
			} else {
				Expect(c.Status).To(Equal(harness.StatusPass))
			}
		}
	})

	It("reports a function its ready message declines as skipped, with the executor's reason", func() {
		res := withFake(fake("refuse", "lin"))
		for _, c := range byExecutor(res.Cases, "fake") {
			if c.Function == "lin" {
				Expect(c.Status).To(Equal(harness.StatusSkip))
				Expect(c.Message).To(HaveSuffix("fake does not serve lin: the fake refuses it"))
			}
		}
	})

	It("refuses a process that greets with another protocol version", func() {
		f := tinyFile()
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		_, err = fake("oldproto", "").Prepare(context.Background(), f, p)
		Expect(err).To(MatchError(external.ErrStart))
		Expect(err).To(MatchError(external.ErrProtocol))
		Expect(err.Error()).To(ContainSubstring(`speaks "rxeq.executor/v0", want "rxeq.executor/v1"`))
	})

	It("reports a command that does not exist as a preparation error of its cases", func() {
		e, err := external.New(external.Options{Name: "ghost", Command: []string{"/nonexistent/rxeq-executor"}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(e.Close)
		res := withFake(e)
		for _, c := range byExecutor(res.Cases, "ghost") {
			Expect(c.Status).To(Equal(harness.StatusError))
			Expect(c.Message).To(ContainSubstring("external executor did not start: ghost"))
		}
	})

	It("carries a runtime error back with its kind and the shared text", func() {
		src := `//rx:scenario rem
//rx:expect-error "CheckedRem: division by zero (i=0)"
//rx:input x normal(0, 1)
//rx:input d const(0)
package rem

func f(x [B][2]float32, d int64) (y [B][2]float32) {
	y = x
	for i := range 3 {
		if CheckedRem(i, d) == 0 {
			y = y * 2
		}
	}
	return
}
`
		f := parseRx("rem.rx", src)
		res, err := harness.Run(context.Background(), []*program.File{f}, harness.Options{Executors: []executor.Executor{fake("ok", "")}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.OK()).To(BeTrue(), "%+v", res.Cases)
		fk := byExecutor(res.Cases, "fake")
		Expect(fk).To(HaveLen(1))
		Expect(fk[0].Error).To(Equal("f: CheckedRem: division by zero (i=0) at rem.rx:10:6"))

		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		e := fake("ok", "")
		pr, err := e.Prepare(context.Background(), f, p)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(pr.Close)
		_, err = pr.Run(context.Background(), "f", map[string]*tensor.Tensor{"x": tensor.NewFloat32(1, 2), "d": tensor.Scalar(0)})
		var re *ir.RuntimeError
		Expect(errors.As(err, &re)).To(BeTrue())
		Expect(re.Kind).To(Equal(ir.ErrDivisionByZero))
	})

	It("serves several programs from one process", func() {
		e := fake("ok", "")
		a := tinyPrepared(e)
		b := tinyPrepared(e)
		_, err := a.Run(context.Background(), "sq", tinyInputs("sq", 1))
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Close()).To(Succeed())
		_, err = b.Run(context.Background(), "sq", tinyInputs("sq", 1))
		Expect(err).NotTo(HaveOccurred())
	})
})

var _ = Describe("ParseSpec", func() {
	DescribeTable("splits NAME=COMMAND into a name and an argv",
		func(spec, name string, argv ...string) {
			o, err := external.ParseSpec(spec)
			Expect(err).NotTo(HaveOccurred())
			Expect(o.Name).To(Equal(name))
			Expect(o.Command).To(Equal(argv))
		},
		Entry("plain words", "np=/usr/bin/python3 a.py m.py", "np", "/usr/bin/python3", "a.py", "m.py"),
		Entry("single quotes", "np=python3 'my dir/m.py'", "np", "python3", "my dir/m.py"),
		Entry("double quotes with escapes", `np=python3 "a \"b\" c"`, "np", "python3", `a "b" c`),
		Entry("a backslash", `np=python3 my\ dir/m.py`, "np", "python3", "my dir/m.py"),
		Entry("= inside the command", "np=env A=1 prog", "np", "env", "A=1", "prog"),
	)

	DescribeTable("rejects a bad name or command",
		func(spec, want string) {
			_, err := external.ParseSpec(spec)
			Expect(err).To(MatchError(executor.ErrOptions))
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("no =", "python3 m.py", "want NAME=COMMAND"),
		Entry("a bad name", "1np=python3", "want NAME=COMMAND"),
		Entry("an empty command", "np=  ", "empty command"),
		Entry("an open quote", "np=python3 'm.py", "unterminated '"),
	)

	It("splits what a shell would split", func() {
		words, err := external.SplitCommand(` a  'b c' "d" e\ f ''`)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Join(words, "|")).To(Equal("a|b c|d|e f|"))
	})
})
