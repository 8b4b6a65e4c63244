package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/selftest"
)

// TestMain lets the test binary be its own `rxeq worker` (and its own
// `rxeq selftest-executor`, which `rxeq selftest` starts): `run --isolate`
// starts os.Executable() with the argument "worker", which is this binary
// under test, so the worker path is the command's real one.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "worker" || os.Args[1] == selftest.HostileArg) {
		tuneGC(os.Getenv) // as main does for a real worker
		os.Exit(runMain(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == asRxeq {
		os.Exit(mainWithSignals(os.Args[2:]))
	}
	os.Exit(m.Run())
}

var _ = Describe("run --isolate", Label("native"), func() {
	It("runs the catalog with native code in a worker, with the same results", func() {
		code, out, errOut := rxeq("run", "--isolate", "--backend", "native")
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(MatchRegexp(fmt.Sprintf(`%d passed, 0 failed, 0 errors; locks 5/5 held`, catalogGroups())))
		Expect(out).To(MatchRegexp(`reference-scoring\s+score_linear\s+128\s+native\s+native\s+PASS`))
	})

	It("runs the catalog through torch in a worker, with the same results", Label("torch"), func() {
		if err := builtin.Available(executor.Torch); err != nil {
			if os.Getenv("RXEQ_REQUIRE_TORCH") != "" {
				Fail("libtorch is required here (RXEQ_REQUIRE_TORCH is set) but: " + err.Error())
			}
			Skip("the torch executor needs libtorch, which this machine lacks: " + err.Error())
		}
		code, out, errOut := rxeq("run", "--isolate", "--backend", "torch", "--torch-threads", "1")
		Expect(code).To(Equal(0), out+errOut)
		// op-accuracy/sigmoid_underflow's 3 batches skip torch (//rx:skip:
		// ATen's Sigmoid underflows to 0, ledger torch-sigmoid-underflow).
		Expect(out).To(MatchRegexp(fmt.Sprintf(`%d passed, 0 failed, 0 errors, 3 skipped; locks 5/5 held`, catalogGroups()-3)))
		Expect(out).To(MatchRegexp(`reference-scoring\s+score_linear\s+128\s+torch\s+torch\s+PASS`))
	})

	It("reports a crash in generated code as that case's failure and finishes the run", func() {
		dir := GinkgoT().TempDir()
		obj := filepath.Join(dir, "fault_segv.o")
		msg, err := exec.Command("cc", "-c", "-fPIC", "-o", obj, "../../isolate/testdata/fault_segv.c").CombinedOutput()
		if err != nil {
			Skip("no C compiler: " + string(msg))
		}
		GinkgoT().Setenv("CC", "cc -Wl,--wrap=tanh "+obj)
		GinkgoT().Setenv("RXEQ_NATIVE_ISA", "c")
		GinkgoT().Setenv("RXEQ_CACHE", filepath.Join(dir, "cache"))
		code, out, _ := rxeq("run", "--isolate", "--backend", "oracle,fallback,native", "../../isolate/testdata/two.rx")
		Expect(code).To(Equal(1))
		Expect(out).To(MatchRegexp(`isolate-two-funcs\s+squash\s+4\s+native\s+native\s+FAIL`))
		Expect(out).To(MatchRegexp(`isolate-two-funcs\s+plain\s+4\s+native\s+native\s+PASS`))
		Expect(out).To(ContainSubstring("10 passed, 2 failed, 0 errors"))
		Expect(out).To(ContainSubstring(`--- FAIL isolate-two-funcs/squash/b1/native`))
		Expect(out).To(ContainSubstring(`native crashed: signal SIGSEGV`))
	})

	It("reports cases queued behind hanging ones as not run, never as their own timeouts", func() {
		dir := GinkgoT().TempDir()
		obj := filepath.Join(dir, "fault_hang.o")
		msg, err := exec.Command("cc", "-c", "-fPIC", "-o", obj, "../../isolate/testdata/fault_hang.c").CombinedOutput()
		if err != nil {
			Skip("no C compiler: " + string(msg))
		}
		GinkgoT().Setenv("CC", "cc -Wl,--wrap=tanh "+obj)
		GinkgoT().Setenv("RXEQ_NATIVE_ISA", "c")
		GinkgoT().Setenv("RXEQ_CACHE", filepath.Join(dir, "cache"))
		// Six squash cases hang; which plain cases queue behind them depends
		// on scheduling, so the spec holds for every order: a plain case
		// passes, or was not run and says why (the worker was busy with a
		// squash case, or with a plain case that got it after a squash case
		// timed out while this one waited, or was still restarting), or, if
		// it got the worker just before its deadline, says how long it ran
		// after how long a wait.
		code, out, _ := rxeq("run", "--isolate", "--timeout", "1s", "--parallel", "12", "--backend", "native",
			"../../isolate/testdata/queued_hang.rx")
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring("native timed out after 1s"))
		for _, block := range strings.Split(out, "\n--- ")[1:] {
			head, body, _ := strings.Cut(block, "\n")
			if strings.Contains(head, "/plain/") {
				Expect(body).To(Or(HavePrefix("    not run: the native worker was busy with isolate-queued-hang/squash/b"),
					MatchRegexp(`^    not run: the native worker was busy with isolate-queued-hang/plain/b\d+/native \(running for \S+; isolate-queued-hang/squash/b\d+/native timed out after 1s while this case waited\)`),
					HavePrefix("    not run: restarting the native worker after isolate-queued-hang/squash/b"),
					HavePrefix("    not run: the case's deadline came before the native worker took it"),
					MatchRegexp(`^    case timed out after 6s \(native worker killed: .* \(it ran \S+, after waiting \S+ for the native worker\)\)`)), head)
			}
		}
	})

	It("hides the worker command from the usage and refuses arguments", func() {
		_, out, _ := rxeq("help")
		Expect(out).NotTo(ContainSubstring("worker"))
		code, _, errOut := rxeq("worker", "extra")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("takes no arguments"))
	})
})
