package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/reports"
)

// The rxeq binary built with CGO_ENABLED=0, in this build with or without
// cgo: native and torch are reported as not run, with the reason, and the
// rest of the command works.
var _ = Describe("rxeq built with CGO_ENABLED=0", Label("e2e"), Ordered, func() {
	reason := native.ErrUnavailable.Error()
	var bin string

	BeforeAll(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			Skip("no go command to build rxeq with: " + err.Error())
		}
		bin = filepath.Join(GinkgoT().TempDir(), "rxeq")
		build := exec.Command(gobin, "build", "-o", bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "CGO_ENABLED=0 go build ./cmd/rxeq:\n%s", out)
	})

	// run runs the built binary and returns its exit code and output.
	run := func(args ...string) (code int, stdout, stderr string) {
		GinkgoHelper()
		var out, errOut bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), out.String(), errOut.String()
		}
		Expect(err).NotTo(HaveOccurred())
		return 0, out.String(), errOut.String()
	}

	It("runs the catalog on the oracle and the fallback, holds every lock, names native and torch as not run and exits 0", func() {
		jsonPath := filepath.Join(GinkgoT().TempDir(), "r.json")
		code, out, errOut := run("run", "--json", jsonPath)
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(MatchRegexp(`%d passed, 0 failed, 0 errors; locks 5/5 held`, 2*catalogGroups()))
		Expect(out).To(ContainSubstring("\nnative: not run on this machine: " + reason + "\n"))
		Expect(out).To(ContainSubstring("\ntorch: not run on this machine: " + reason + "\n"))
		Expect(out).To(MatchRegexp(`reference-scoring\s+score_linear\s+128\s+fallback\s+fallback\s+PASS`))
		Expect(out).NotTo(MatchRegexp(`\s(native|torch)\s+(native|torch)\s`))

		f, err := os.Open(jsonPath)
		Expect(err).NotTo(HaveOccurred())
		defer f.Close()
		rep, err := reports.ReadJSON(f)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Unavailable).To(Equal([]reports.Unavailable{{Executor: "native", Reason: reason}, {Executor: "torch", Reason: reason}}))
	})

	It("does the same with native code in workers (--isolate)", func() {
		code, out, errOut := run("run", "--isolate", "--batch", "1", "../../scenarios/rounds.rx")
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(ContainSubstring("\nnative: not run on this machine: " + reason + "\n"))
		Expect(out).To(ContainSubstring("\ntorch: not run on this machine: " + reason + "\n"))
	})

	It("exits 2 with the reason when native or torch is asked for by name", func() {
		code, out, errOut := run("run", "--backend", "oracle,native")
		Expect(code).To(Equal(2))
		Expect(out).To(BeEmpty())
		Expect(errOut).To(ContainSubstring("--backend native: " + reason))
		code, _, errOut = run("run", "--backend", "torch")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("--backend torch: " + reason))
		code, _, errOut = run("fuzz", "--executors", "oracle,fallback,native", "--count", "1")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("executor native: " + reason))
	})

	It("fuzzes oracle against fallback by default", func() {
		dir := GinkgoT().TempDir()
		code, out, errOut := run("fuzz", "--count", "3", "--out", dir)
		Expect(code).To(Equal(0), out+errOut)
		Expect(out + errOut).NotTo(ContainSubstring("native"))
		code, out, errOut = run("fuzz", "--help")
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(ContainSubstring(`(default "oracle,fallback")`))
	})

	It("still generates C and checks the locks", func() {
		code, out, errOut := run("gen", "--func", "score", "testdata/badlock.rx")
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(HavePrefix("/* score: testdata/badlock.rx:15:1 */\n"))
		code, out, errOut = run("lock")
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(ContainSubstring("PASS reference-scoring/score_linear"))
	})
})
