package subproc_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/internal/subproc"
)

// lineChild is a started child and a line codec over its pipes.
type lineChild struct {
	*subproc.Process
	r *bufio.Reader
}

// start starts cfg (by default this test binary in mode) for the executor
// "t" and stops it when the spec ends.
func start(mode string, cfg subproc.Config) *lineChild {
	if len(cfg.Argv) == 0 {
		self, err := os.Executable()
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		cfg.Argv = []string{self}
		cfg.Env = append(cfg.Env, childEnv+"="+mode)
	}
	if cfg.Executor == "" {
		cfg.Executor = "t"
	}
	p, err := subproc.Start(cfg)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	DeferCleanup(p.Kill)
	return &lineChild{Process: p, r: bufio.NewReader(p.Stdout())}
}

// call sends line and reads the answer line, which must start "ok ".
func (c *lineChild) call(ctx context.Context, timeout time.Duration, line string) (string, error) {
	var answer string
	err := c.Exchange(ctx, timeout, "the answer to "+line,
		func() error { _, err := fmt.Fprintln(c.Stdin(), line); return err },
		func() error {
			s, err := c.r.ReadString('\n')
			if err != nil {
				return err
			}
			if !strings.HasPrefix(s, "ok ") {
				return fmt.Errorf("%w: %q is not an answer", executor.ErrProtocol, s)
			}
			answer = strings.TrimSpace(strings.TrimPrefix(s, "ok "))
			return nil
		})
	return answer, err
}

// processError returns err as an *executor.ProcessError, failing the
// spec when it is not one.
func processError(err error) *executor.ProcessError {
	var pe *executor.ProcessError
	ExpectWithOffset(1, errors.As(err, &pe)).To(BeTrue(), "%v", err)
	return pe
}

var _ = Describe("a supervised process", func() {
	It("answers through the caller's codec", func() {
		c := start("echo", subproc.Config{})
		got, err := c.call(context.Background(), time.Second, "hi")
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal("hi"))
		Expect(c.Alive()).To(BeTrue())
	})

	It("reports a crash with a signal, named after the executor, with its stderr", func() {
		c := start("", subproc.Config{Argv: []string{"/bin/sh", "-c", "read x; echo boom >&2; kill -SEGV $$"}})
		_, err := c.call(context.Background(), 5*time.Second, "hi")
		Expect(err).To(MatchError(executor.ErrCrashed))
		Expect(errors.Is(err, executor.ErrTimedOut)).To(BeFalse())
		pe := processError(err)
		Expect(pe.Executor).To(Equal(executor.Name("t")))
		Expect(pe.Signal).To(Equal("SIGSEGV"))
		Expect(pe.Stderr).To(Equal("boom"))
		Expect(err.Error()).To(Equal("t crashed: signal SIGSEGV\nworker stderr (tail):\nboom"))
		Expect(c.Alive()).To(BeFalse())
	})

	It("reports an exit code, with the engine's own kind and an external executor's text", func() {
		crashed := fmt.Errorf("external executor %w", executor.ErrCrashed)
		c := start("exit3", subproc.Config{Executor: "fake", External: true, Crashed: crashed})
		_, err := c.call(context.Background(), 5*time.Second, "hi")
		Expect(err).To(MatchError(crashed))
		Expect(err).To(MatchError(executor.ErrCrashed))
		pe := processError(err)
		Expect(pe.Signal).To(BeEmpty())
		Expect(pe.ExitCode).To(Equal(3))
		Expect(err.Error()).To(Equal("external executor crashed: fake, while waiting for the answer to hi: exit status 3\nexecutor stderr (tail):\ndying on purpose"))
	})

	It("takes the signal a Go child's runtime reported for what it died of, and keeps its report without the goroutine dump", func() {
		c := start("gofatal", subproc.Config{GoChild: true, Executor: executor.Torch})
		_, err := c.call(context.Background(), 5*time.Second, "hi")
		Expect(err).To(MatchError(executor.ErrCrashed))
		pe := processError(err)
		Expect(pe.Signal).To(Equal("SIGSEGV"))
		Expect(err.Error()).To(Equal("torch crashed: signal SIGSEGV\nworker stderr (tail):\nkernel says hi\n" +
			"SIGSEGV: segmentation violation\nPC=0x7f00 m=0 sigcode=1 addr=0x0\nsignal arrived during cgo execution"))
	})

	It("kills a process that does not answer within the timeout", func() {
		c := start("hang", subproc.Config{})
		began := time.Now()
		_, err := c.call(context.Background(), 200*time.Millisecond, "hi")
		Expect(time.Since(began)).To(BeNumerically("<", 2*time.Second))
		Expect(err).To(MatchError(executor.ErrTimedOut))
		Expect(errors.Is(err, executor.ErrCrashed)).To(BeFalse())
		pe := processError(err)
		Expect(pe.Timeout).To(Equal(200 * time.Millisecond))
		Expect(err.Error()).To(Equal("t timed out after 200ms"))
		Expect(c.Alive()).To(BeFalse())
	})

	It("kills a process when the context ends, and says so with the context's error", func() {
		c := start("hang", subproc.Config{})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := c.call(ctx, 0, "hi")
		Expect(err).To(MatchError(context.Canceled))
		var pe *executor.ProcessError
		Expect(errors.As(err, &pe)).To(BeFalse(), "the process did not fail: rxeq gave up")
		Expect(err.Error()).To(Equal("t worker killed while waiting for the answer to hi: context canceled"))
		Expect(c.Alive()).To(BeFalse())
	})

	It("times out a write the process does not read, on the calling goroutine, and kills it", func() {
		c := start("hang", subproc.Config{})
		big := strings.Repeat("x", 4<<20) // more than the pipe (1 MiB) and the child's line buffer hold
		began := time.Now()
		_, err := c.call(context.Background(), 300*time.Millisecond, big)
		Expect(time.Since(began)).To(BeNumerically("<", 3*time.Second))
		Expect(err).To(MatchError(executor.ErrTimedOut))
		Expect(err.Error()).To(Equal("t timed out after 300ms"))
		Expect(c.Alive()).To(BeFalse())
	})

	It("takes a read that the deadline ended for a timeout, whatever the codec made of the error", func() {
		c := start("hang", subproc.Config{})
		err := c.Exchange(context.Background(), 200*time.Millisecond, "the answer to hi",
			func() error { _, err := fmt.Fprintln(c.Stdin(), "hi"); return err },
			func() error {
				_, err := c.r.ReadString('\n')
				return fmt.Errorf("my codec failed: %v", err) // the error's chain is lost
			})
		Expect(err).To(MatchError(executor.ErrTimedOut))
		Expect(processError(err).Timeout).To(Equal(200 * time.Millisecond))
		Expect(c.Alive()).To(BeFalse())
	})

	It("leaves no deadline behind: a later call without a timeout waits as long as it takes", func() {
		c := start("echo", subproc.Config{})
		_, err := c.call(context.Background(), 30*time.Second, "warm-up") // the child's start, however loaded the machine
		Expect(err).NotTo(HaveOccurred())
		got, err := c.call(context.Background(), 500*time.Millisecond, "first")
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal("first"))
		time.Sleep(600 * time.Millisecond) // past the first call's deadline
		got, err = c.call(context.Background(), 0, "second")
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal("second"))
		ctx, cancel := context.WithCancel(context.Background())
		got, err = c.call(ctx, 0, "third") // a context that can end, and does after the call
		cancel()
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal("third"))
		time.Sleep(50 * time.Millisecond)
		Expect(c.Alive()).To(BeTrue(), "the end of a call's context after the call kills nothing")
		got, err = c.call(context.Background(), 30*time.Second, "fourth")
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal("fourth"))
	})

	It("says whether its last read left the pipe empty", func() {
		c := start("echo", subproc.Config{})
		_, err := c.call(context.Background(), 30*time.Second, "hi")
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Drained()).To(BeTrue(), "a 6-byte answer read into a 4 KiB buffer")
		Expect(c.Pending()).To(Equal(0))
	})

	It("calls garbage a protocol violation, and kills the process", func() {
		c := start("garbage", subproc.Config{})
		_, err := c.call(context.Background(), 5*time.Second, "hi")
		Expect(err).To(MatchError(executor.ErrProtocol))
		pe := processError(err)
		Expect(pe.Detail).To(ContainSubstring(`"debug: x=1\n" is not an answer`))
		Expect(err.Error()).To(HavePrefix("t worker: bad message from the worker: "))
		Expect(c.Alive()).To(BeFalse())
	})

	It("calls a closed stdout of a live process a protocol violation", func() {
		c := start("closeout", subproc.Config{Executor: "fake", External: true})
		_, err := c.call(context.Background(), 10*time.Second, "hi")
		Expect(err).To(MatchError(executor.ErrProtocol))
		Expect(err.Error()).To(Equal("executor protocol violation: fake, while waiting for the answer to hi: it closed its stdout or sent a cut message (EOF)"))
		Expect(c.Alive()).To(BeFalse())
	})

	It("stops cleanly a process that ends with its stdin", func() {
		c := start("echo", subproc.Config{})
		began := time.Now()
		c.Stop(5*time.Second, func() { fmt.Fprintln(c.Stdin(), "bye") })
		Expect(time.Since(began)).To(BeNumerically("<", 2*time.Second))
		Expect(c.Alive()).To(BeFalse())
		Expect(gone(c.Pid())).To(BeTrue())
	})

	It("stops a process that will not end by killing its group, grandchildren too", func() {
		c := start("grandchild", subproc.Config{})
		got, err := c.call(context.Background(), 5*time.Second, "start")
		Expect(err).NotTo(HaveOccurred())
		grandchild, err := strconv.Atoi(got)
		Expect(err).NotTo(HaveOccurred(), got)
		Expect(gone(grandchild)).To(BeFalse())
		c.Stop(200*time.Millisecond, nil)
		Expect(c.Alive()).To(BeFalse())
		Expect(gone(c.Pid())).To(BeTrue())
		Eventually(func() bool { return gone(grandchild) }, eventually).Should(BeTrue())
	})
})

var _ = Describe("a gate", func() {
	It("lets one call in at a time", func() {
		g := subproc.NewGate("the native worker")
		a, err := g.Enter(context.Background(), "a")
		Expect(err).NotTo(HaveOccurred())
		_, ok := g.TryEnter("b")
		Expect(ok).To(BeFalse())
		a.Leave()
		b, ok := g.TryEnter("b")
		Expect(ok).To(BeTrue())
		b.Leave()
	})

	It("says which call held the process when a waiting call's deadline came", func() {
		g := subproc.NewGate("the native worker")
		holder, err := g.Enter(context.Background(), "s/f/b4/native")
		Expect(err).NotTo(HaveOccurred())
		defer holder.Leave()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err = g.Enter(ctx, "s/f/b1/native")
		Expect(err).To(MatchError(executor.ErrNotRun))
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Expect(err.Error()).To(MatchRegexp(`^not run: the native worker was busy with s/f/b4/native \(running for [0-9.]+m?s\) until this case's deadline: context deadline exceeded$`))
	})

	It("also names a call that timed out while the waiting call waited", func() {
		g := subproc.NewGate("the native worker")
		hung, err := g.Enter(context.Background(), "s/g/b1/native")
		Expect(err).NotTo(HaveOccurred())
		// Next waits first, so it gets the process when the hung call
		// gives it up; the call this spec watches waits behind both.
		next := make(chan *subproc.Turn, 1)
		go func() {
			t, err := g.Enter(context.Background(), "s/f/b4/native")
			Expect(err).NotTo(HaveOccurred())
			next <- t
		}()
		time.Sleep(50 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		waited := make(chan error, 1)
		go func() {
			t, err := g.Enter(ctx, "s/h/b1/native")
			if err == nil {
				t.Leave()
			}
			waited <- err
		}()
		time.Sleep(50 * time.Millisecond)
		hung.TimedOut(30 * time.Second)
		hung.Leave()
		var t *subproc.Turn
		Eventually(next).Should(Receive(&t))
		defer t.Leave()
		var got error
		Eventually(waited).Should(Receive(&got))
		Expect(got).To(MatchError(executor.ErrNotRun))
		Expect(got.Error()).To(MatchRegexp(`^not run: the native worker was busy with s/f/b4/native \(running for [0-9.]+m?s; s/g/b1/native timed out after 30s while this case waited\) until this case's deadline: context deadline exceeded$`))
	})

	It("says the deadline came first when the process came free as it ended", func() {
		g := subproc.NewGate("the torch worker")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := g.Enter(ctx, "s/f/b1/torch")
		Expect(err).To(MatchError(executor.ErrNotRun))
		Expect(err).To(MatchError(context.Canceled))
		Expect(err.Error()).To(Equal("not run: the case's deadline came before the torch worker took it: context canceled"))
	})

	It("says a call never ran when its deadline came while it restarted the process", func() {
		g := subproc.NewGate("the native worker")
		hung, err := g.Enter(context.Background(), "s/g/b1/native")
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := context.WithCancel(context.Background())
		turns := make(chan *subproc.Turn, 1)
		go func() {
			t, err := g.Enter(ctx, "s/f/b1/native")
			Expect(err).NotTo(HaveOccurred())
			turns <- t
		}()
		time.Sleep(20 * time.Millisecond)
		hung.TimedOut(time.Second)
		hung.Leave()
		var t *subproc.Turn
		Eventually(turns).Should(Receive(&t))
		defer t.Leave()
		cancel()
		err = t.NotStarted(ctx, "restarting the native worker")
		Expect(err).To(MatchError(executor.ErrNotRun))
		Expect(err).To(MatchError(context.Canceled))
		Expect(err.Error()).To(Equal("not run: restarting the native worker after s/g/b1/native timed out took until this case's deadline: context canceled"))
		ran := t.Ran(fmt.Errorf("native worker killed: %w", ctx.Err()))
		Expect(ran).To(MatchError(context.Canceled))
		Expect(ran.Error()).To(MatchRegexp(`^native worker killed: context canceled \(it ran [0-9.]+m?s, after waiting [0-9.]+m?s for the native worker\)$`))
	})
})

var _ = Describe("a stderr tail", func() {
	It("keeps the last bytes", func() {
		t := subproc.NewTail(8, false)
		fmt.Fprint(t, "0123456789abcdef\n")
		Expect(t.Report()).To(Equal("9abcdef"))
		Expect(t.FatalSignal()).To(BeEmpty())
	})

	It("sees no Go runtime report in a child that is not a Go program", func() {
		t := subproc.NewTail(4096, false)
		fmt.Fprint(t, "SIGSEGV: segmentation violation\ngoroutine 1:\n")
		Expect(t.FatalSignal()).To(BeEmpty())
		Expect(t.Report()).To(ContainSubstring("goroutine 1"))
	})
})

var _ = Describe("no process outlives its supervisor", func() {
	It("kills what a process started as soon as it exits, even when it exits by itself", func() {
		c := start("forkexit", subproc.Config{})
		got, err := c.call(context.Background(), 5*time.Second, "start")
		Expect(err).NotTo(HaveOccurred())
		grandchild, err := strconv.Atoi(got)
		Expect(err).NotTo(HaveOccurred(), got)
		Eventually(c.Done(), eventually).Should(BeClosed())
		Eventually(func() bool { return gone(grandchild) }, eventually).Should(BeTrue(), "the grandchild %d outlived the crashed process", grandchild)
	})

	It("kills a command under a Guard, and what it started, when the guard's parent is killed with SIGKILL", func() {
		self, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())
		parent := exec.Command(self)
		parent.Env = append(os.Environ(), childEnv+"=guarded")
		out, err := parent.StdoutPipe()
		Expect(err).NotTo(HaveOccurred())
		Expect(parent.Start()).To(Succeed())
		line, err := bufio.NewReader(out).ReadString('\n')
		Expect(err).NotTo(HaveOccurred())
		sleeper, err := strconv.Atoi(strings.TrimSpace(line))
		Expect(err).NotTo(HaveOccurred(), line)
		Expect(gone(sleeper)).To(BeFalse())
		Expect(parent.Process.Kill()).To(Succeed()) // SIGKILL: the parent runs no code of its own
		_ = parent.Wait()
		Eventually(func() bool { return gone(sleeper) }, eventually).Should(BeTrue(), "sleep %d outlived the killed parent", sleeper)
	})

	It("keeps the exit status of the guarded command", func() {
		argv := subproc.Guard([]string{"/bin/sh", "-c", "read x; echo got $x; exit 7"})
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.SysProcAttr = subproc.GuardProcAttr()
		cmd.Stdin = strings.NewReader("in\n")
		out, err := cmd.Output()
		Expect(string(out)).To(Equal("got in\n"))
		var ee *exec.ExitError
		Expect(errors.As(err, &ee)).To(BeTrue(), "%v", err)
		Expect(ee.ExitCode()).To(Equal(7))
	})
})

var _ = Describe("a process that exits between messages", func() {
	It("says the next request was never read, so the caller can send it again elsewhere", func() {
		for i := range 6 {
			c := start("answerexit", subproc.Config{})
			_, err := c.call(context.Background(), 5*time.Second, "a")
			Expect(err).NotTo(HaveOccurred())
			if i%2 == 0 {
				Eventually(c.Done(), eventually).Should(BeClosed()) // the write finds the pipe closed
			} // else: the request races the exit
			_, err = c.call(context.Background(), 5*time.Second, "b")
			Expect(err).To(MatchError(executor.ErrCrashed))
			Expect(errors.Is(err, subproc.ErrUndelivered)).To(BeTrue(), "try %d: %v", i, err)
		}
	})

	It("does not say so of a process that read the request and then died", func() {
		c := start("exit3", subproc.Config{})
		_, err := c.call(context.Background(), 5*time.Second, "a")
		Expect(err).To(MatchError(executor.ErrCrashed))
		Expect(errors.Is(err, subproc.ErrUndelivered)).To(BeFalse(), "%v", err)
	})
})

var _ = Describe("a guarded process", func() {
	It("fails to start, as an unguarded one, when its command does not exist", func() {
		for _, argv0 := range []string{"/nonexistent/exec", "rxeq-no-such-command"} {
			_, err := subproc.Start(subproc.Config{Argv: []string{argv0}, Executor: "t", Guard: true})
			Expect(err).To(HaveOccurred(), argv0)
			Expect(err.Error()).To(ContainSubstring(argv0))
		}
	})

	It("answers through the caller's codec, and its group goes with it", func() {
		c := start("forkexit", subproc.Config{Guard: true})
		got, err := c.call(context.Background(), 5*time.Second, "start")
		Expect(err).NotTo(HaveOccurred())
		grandchild, err := strconv.Atoi(got)
		Expect(err).NotTo(HaveOccurred(), got)
		Eventually(c.Done(), eventually).Should(BeClosed())
		Eventually(func() bool { return gone(grandchild) }, eventually).Should(BeTrue())
	})
})
