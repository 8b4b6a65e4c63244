package external_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/external"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
)

// fakeWith is fake with more options: the pid file of the fork modes and
// the timeouts.
func fakeWith(mode, bad, pidFile string, timeout time.Duration) *external.Executor {
	self, err := os.Executable()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	e, err := external.New(external.Options{
		Name:    "fake",
		Command: []string{self},
		Env:     []string{external.FakeExecutorEnv + "=" + mode, external.FakeBadFuncEnv + "=" + bad, external.FakePidFileEnv + "=" + pidFile},
		Timeout: timeout,
	})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	DeferCleanup(e.Close)
	return e
}

// alive reports whether process pid runs (not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || (b[i+2] != 'Z' && b[i+2] != 'X')
}

// exists reports whether process pid exists, even as a zombie.
func exists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// pidIn waits for the pid the fake writes to path.
func pidIn(path string) int {
	var pid int
	EventuallyWithOffset(1, func() error {
		b, err := os.ReadFile(path)
		if err == nil {
			pid, err = strconv.Atoi(string(b))
		}
		return err
	}, 5*time.Second).Should(Succeed())
	DeferCleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

var _ = Describe("a hostile external executor", func() {
	ctx := context.Background()

	It("costs no memory for a result header claiming what was not asked for, and fails that case only", func() {
		pr := tinyPrepared(fakeWith("bigclaim", "sq", "", 0))
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := pr.Run(ctx, "sq", tinyInputs("sq", 4))
		runtime.ReadMemStats(&after)
		Expect(err).To(MatchError(external.ErrOutput))
		Expect(err).To(MatchError("fake returned wrong outputs for sq: output y is float32 [268435456], want float32 [4 4] ([B][4]float32 with B=4)"))
		Expect(after.TotalAlloc-before.TotalAlloc).To(BeNumerically("<", 16<<20), "bytes allocated for a 1 GiB claim")
		out, err := pr.Run(ctx, "lin", tinyInputs("lin", 4))
		Expect(err).NotTo(HaveOccurred())
		Expect(out.Outputs).To(HaveKey("probs"))
	})

	It("times out a call the executor never answers at the call's deadline, and the next call passes on a new process", func() {
		self, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())
		e, err := external.New(external.Options{Name: "fake", Command: []string{self},
			Env:     []string{external.FakeExecutorEnv + "=hang", external.FakeBadFuncEnv + "=sq"},
			Timeout: 2 * time.Second, StartTimeout: 30 * time.Second}) // starts are not the call's, however loaded the machine
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(e.Close)
		pr := tinyPrepared(e)
		ctx, cancel := context.WithCancel(ctx) // a context that can end, as the harness's
		defer cancel()
		Expect(pr.(executor.Readier).Ready(ctx, "sq")).To(Succeed()) // the process runs, its program prepared
		began := time.Now()
		_, err = pr.Run(ctx, "sq", tinyInputs("sq", 4))
		Expect(time.Since(began)).To(BeNumerically("<", 10*time.Second))
		Expect(err).To(MatchError(external.ErrTimedOut))
		Expect(err).To(MatchError(executor.ErrTimedOut))
		Expect(err.Error()).To(ContainSubstring("fake gave no answer within 2s while waiting for the result of sq (killed)"))
		for range 3 {
			Expect(pr.(executor.Readier).Ready(ctx, "lin")).To(Succeed()) // a new process, as the harness starts it before a case's clock
			out, err := pr.Run(ctx, "lin", tinyInputs("lin", 4))
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Outputs).To(HaveKey("probs"))
		}
	})

	It("quotes a shape of millions of dimensions in a few words", func() {
		pr := tinyPrepared(fakeWith("manydims", "sq", "", 0))
		_, err := pr.Run(ctx, "sq", tinyInputs("sq", 4))
		Expect(err).To(MatchError(external.ErrProtocol))
		Expect(err.Error()).To(ContainSubstring(`tensor "y" has a shape of 3000000 dimensions (the limit is 64)`))
		Expect(len(err.Error())).To(BeNumerically("<", 2000))
	})

	It("does not charge the next case when the executor exits between messages", func() {
		res := withFake(fakeWith("exitafter", "", "", 0))
		for _, c := range byExecutor(res.Cases, "fake") {
			Expect(c.Status).To(Equal(harness.StatusPass), "%s: %s", c.Name(), c.Message)
		}
		Expect(byExecutor(res.Cases, "fake")).To(HaveLen(6))
	})

	It("charges stray bytes after a result to the case that wrote them, not to the next", func() {
		pr := tinyPrepared(fakeWith("stray", "sq", "", 0))
		_, err := pr.Run(ctx, "sq", tinyInputs("sq", 4))
		Expect(err).To(MatchError(external.ErrProtocol))
		Expect(err.Error()).To(ContainSubstring(`garbage on stdout: 12 or more bytes (text "debug: done\n") follow the result of sq, before any request`))
		_, err = pr.Run(ctx, "lin", tinyInputs("lin", 4))
		Expect(err).NotTo(HaveOccurred())
	})

	It("leaves no process behind that a crashing executor started", func() {
		pidFile := filepath.Join(GinkgoT().TempDir(), "pid")
		pr := tinyPrepared(fakeWith("forkcrash", "sq", pidFile, 0))
		_, err := pr.Run(ctx, "sq", tinyInputs("sq", 4))
		Expect(err).To(MatchError(external.ErrCrashed))
		pid := pidIn(pidFile)
		Eventually(func() bool { return alive(pid) }, 5*time.Second).Should(BeFalse(), "sleep %d outlived the crashed executor", pid)
	})

	It("leaves no process behind that an executor started while it handled close", func() {
		pidFile := filepath.Join(GinkgoT().TempDir(), "pid")
		e := fakeWith("forkclose", "", pidFile, 0)
		pr := tinyPrepared(e)
		_, err := pr.Run(ctx, "sq", tinyInputs("sq", 4))
		Expect(err).NotTo(HaveOccurred())
		Expect(e.Close()).To(Succeed())
		pid := pidIn(pidFile)
		Eventually(func() bool { return alive(pid) }, 5*time.Second).Should(BeFalse(), "sleep %d outlived the closed executor", pid)
	})

	// The test binary is a child subreaper (TestMain), as rxeq is: the
	// escaped sleeper is re-parented to it, so it must also be reaped,
	// not left a zombie.
	DescribeTable("leaves no process behind that escaped its group and session with setsid",
		func(mode string, timeout time.Duration, call func(*external.Executor, executor.Prepared, string) error, want error) {
			pidFile := filepath.Join(GinkgoT().TempDir(), "pid")
			e := fakeWith(mode, "sq", pidFile, timeout)
			pr := tinyPrepared(e)
			err := call(e, pr, pidFile)
			if want == nil {
				Expect(err).NotTo(HaveOccurred())
			} else {
				Expect(err).To(MatchError(want))
			}
			pid := pidIn(pidFile)
			Eventually(func() bool { return exists(pid) }, 5*time.Second).Should(BeFalse(), func() string {
				b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
				return "the sleeper outlived the executor (or was left a zombie): " + string(b)
			})
		},
		Entry("when the executor crashes", "escapecrash", time.Duration(0), func(_ *external.Executor, pr executor.Prepared, _ string) error {
			_, err := pr.Run(ctx, "sq", tinyInputs("sq", 4))
			return err
		}, external.ErrCrashed),
		Entry("when it is killed for hanging", "escapehang", 2*time.Second, func(_ *external.Executor, pr executor.Prepared, _ string) error {
			_, err := pr.Run(ctx, "sq", tinyInputs("sq", 4))
			return err
		}, external.ErrTimedOut),
		Entry("when it starts the sleeper while it handles close", "escapeclose", time.Duration(0), func(e *external.Executor, pr executor.Prepared, _ string) error {
			if _, err := pr.Run(ctx, "sq", tinyInputs("sq", 4)); err != nil {
				return err
			}
			return e.Close()
		}, nil),
		Entry("when it is closed while the sleeper runs", "escapestay", time.Duration(0), func(e *external.Executor, pr executor.Prepared, pidFile string) error {
			if _, err := pr.Run(ctx, "sq", tinyInputs("sq", 4)); err != nil {
				return err
			}
			pid := pidIn(pidFile)
			Expect(alive(pid)).To(BeTrue(), "the sleeper should run until the executor is closed")
			return e.Close()
		}, nil),
	)

	It("bounds the wait for the hello by the call timeout when that is shorter and no start timeout is given", func() {
		e := fakeWith("nohello", "", "", time.Second)
		f := tinyFile()
		began := time.Now()
		_, err := e.Prepare(ctx, f, lowered(f))
		Expect(err).To(MatchError(executor.ErrStart))
		Expect(errors.Is(err, executor.ErrTimedOut)).To(BeTrue(), "%v", err)
		Expect(time.Since(began)).To(BeNumerically("<", 10*time.Second))
	})

	It("bounds the wait for the hello by the start timeout, when one is given, not by the call timeout", func() {
		self, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())
		e, err := external.New(external.Options{Name: "fake", Command: []string{self},
			Env:     []string{external.FakeExecutorEnv + "=nohello"},
			Timeout: time.Hour, StartTimeout: time.Second})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(e.Close)
		f := tinyFile()
		began := time.Now()
		_, err = e.Prepare(ctx, f, lowered(f))
		Expect(err).To(MatchError(executor.ErrStart))
		Expect(errors.Is(err, executor.ErrTimedOut)).To(BeTrue(), "%v", err)
		Expect(time.Since(began)).To(BeNumerically("<", 10*time.Second))
	})
})

// lowered lowers f.
func lowered(f *program.File) *ir.Program {
	p, err := program.Lower(f)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return p
}

// parentEnv makes the test binary a parent of an external executor (see
// serveParent); its value is the pid file of the fake's sleeper.
const parentEnv = "RXEQ_TEST_EXTERNAL_PARENT"

// serveParent runs one call on the fake executor in mode forkstay (which
// starts a sleeper and keeps serving), says "ready" and waits to be
// killed.
func serveParent(pidFile string) int {
	self, err := os.Executable()
	if err != nil {
		return 2
	}
	e, err := external.New(external.Options{Name: "fake", Command: []string{self},
		Env: []string{external.FakeExecutorEnv + "=forkstay", external.FakeBadFuncEnv + "=sq", external.FakePidFileEnv + "=" + pidFile}})
	if err != nil {
		return 2
	}
	f := tinyFile()
	p, err := program.Lower(f)
	if err != nil {
		return 2
	}
	pr, err := e.Prepare(context.Background(), f, p)
	if err != nil {
		return 2
	}
	in, err := harness.GenerateInputs(f, f.Func("sq"), 2, 7, nil)
	if err != nil {
		return 2
	}
	if _, err := pr.Run(context.Background(), "sq", in); err != nil {
		return 2
	}
	os.Stdout.WriteString("ready\n")
	select {}
}

var _ = Describe("an external executor's children", func() {
	It("die with rxeq even when it is killed with SIGKILL", func() {
		pidFile := filepath.Join(GinkgoT().TempDir(), "pid")
		self, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())
		parent := exec.Command(self)
		parent.Env = append(os.Environ(), parentEnv+"="+pidFile)
		out, err := parent.StdoutPipe()
		Expect(err).NotTo(HaveOccurred())
		Expect(parent.Start()).To(Succeed())
		line, err := bufio.NewReader(out).ReadString('\n')
		Expect(err).NotTo(HaveOccurred())
		Expect(line).To(Equal("ready\n"))
		pid := pidIn(pidFile)
		Expect(alive(pid)).To(BeTrue())
		Expect(parent.Process.Kill()).To(Succeed())
		_ = parent.Wait()
		Eventually(func() bool { return alive(pid) }, 15*time.Second).Should(BeFalse(), "sleep %d outlived the killed rxeq", pid)
	})

	It("still report a crash by signal as that signal under the guard", func() {
		e, err := external.New(external.Options{Name: "sh", Command: []string{"/bin/sh", "-c", "kill -SEGV $$"}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(e.Close)
		f := tinyFile()
		_, err = e.Prepare(context.Background(), f, lowered(f))
		Expect(err).To(MatchError(executor.ErrStart))
		Expect(err.Error()).To(ContainSubstring("signal SIGSEGV"))
	})
})
