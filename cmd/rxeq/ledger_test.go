package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/reports"
)

// statuses maps each case's name to its status.
func statuses(r *reports.Report) map[string]reports.Status {
	out := map[string]reports.Status{}
	for _, c := range r.Cases {
		out[c.Scenario+"/"+c.Name()] = c.Status
	}
	return out
}

var _ = Describe("the known-discrepancy ledger in rxeq run", func() {
	ledgerFile := filepath.Join("testdata", "ledger", "known.json")

	It("reports a failure an entry matches as xfail, and a pass of an entry's own program as xpass, in the table, JSON and JUnit", func() {
		dir := GinkgoT().TempDir()
		js, junit := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml")
		code, out, errOut := rxeq("run", "--backend", "oracle,fallback", "--ledger", ledgerFile, "--json", js, "--junit", junit,
			"testdata/ledger/exp_exact.rx", "testdata/ledger/plain.rx")
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(MatchRegexp(`exp-exact\s+f\s+4\s+fallback\s+fallback\s+XFAIL`))
		Expect(out).To(MatchRegexp(`plain-add\s+f\s+2\s+fallback\s+fallback\s+XPASS`))
		Expect(out).To(ContainSubstring("--- XFAIL exp-exact/f/b4/fallback\n    xfail: fallback-exp-exact: float32 Exp is not float64 Exp\n"))
		Expect(out).To(ContainSubstring("2 passed, 0 failed, 0 errors, 1 xfail, 1 xpass; locks 0/0 held"))
		Expect(lastLine(out)).To(Equal("2 passed, 0 failed, 1 xfail, 1 xpass"))

		st := statuses(readReport(js))
		Expect(st).To(HaveKeyWithValue("exp-exact/f/b4/fallback", reports.StatusXFail))
		Expect(st).To(HaveKeyWithValue("plain-add/f/b2/fallback", reports.StatusXPass))
		Expect(st).To(HaveKeyWithValue("exp-exact/f/b4/oracle", reports.StatusPass))

		x, err := os.ReadFile(junit)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(x)).To(MatchRegexp(`<testcase name="f/b4/fallback" classname="exp-exact" time="[0-9.]+">\s*<skipped message="xfail: fallback-exp-exact: float32 Exp is not float64 Exp">`))
		Expect(string(x)).To(MatchRegexp(`<testsuite name="exp-exact" tests="2" failures="0" errors="0" skipped="1"`))
		Expect(string(x)).To(MatchRegexp(`<testcase name="f/b2/fallback" classname="plain-add" time="[0-9.]+"></testcase>`))
	})

	It("fails an xpass under --strict", func() {
		js := filepath.Join(GinkgoT().TempDir(), "r.json")
		code, out, errOut := rxeq("run", "--backend", "oracle,fallback", "--ledger", ledgerFile, "--strict", "--json", js, "testdata/ledger/plain.rx")
		Expect(code).To(Equal(1), out+errOut)
		Expect(out).To(ContainSubstring("strict xpass: ledger entry fallback-add-wrong expects this case to fail, and it passed"))
		Expect(statuses(readReport(js))).To(HaveKeyWithValue("plain-add/f/b2/fallback", reports.StatusFail))
	})

	It("fails a failure no entry matches, as before", func() {
		code, out, _ := rxeq("run", "--backend", "oracle,fallback", "--ledger", "none", "testdata/ledger/exp_exact.rx")
		Expect(code).To(Equal(1))
		Expect(lastLine(out)).To(Equal("1 passed, 1 failed"))
	})

	It("says what is wrong with a malformed ledger, exit 2", func() {
		bad := filepath.Join(GinkgoT().TempDir(), "bad.json")
		Expect(os.WriteFile(bad, []byte(`{"schema": "rxeq.ledger/v1", "entries": [{"id": "x", "executor": "torch"}]}`), 0o644)).To(Succeed())
		code, _, errOut := rxeq("run", "--ledger", bad, "testdata/ledger/plain.rx")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("bad ledger: entry x: no explanation"))
	})

	It("holds an entry of an executor run by another framework to its version range, read from what the framework reports", func() {
		pythonWith("numpy")
		dir := GinkgoT().TempDir()
		Expect(os.MkdirAll(filepath.Join(dir, "programs"), 0o755)).To(Succeed())
		src, err := os.ReadFile("../../ledger/programs/python-maximum-signed-zero.rx")
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, "programs", "m.rx"), src, 0o644)).To(Succeed())
		writeLedger := func(versions string) string {
			name := filepath.Join(dir, "l"+fmt.Sprint(len(versions))+".json")
			entry := map[string]any{"id": "numpy-max", "executor": "numpy", "framework": "NumPy", "versions": versions,
				"category": "signed-zero", "match": map[string]any{"ops": []string{"Maximum"}},
				"explanation": "np.maximum returns one operand of a tie of zeros", "program": "programs/m.rx"}
			b, err := json.Marshal(map[string]any{"schema": "rxeq.ledger/v1", "entries": []any{entry}})
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(name, b, 0o644)).To(Succeed())
			return name
		}
		// NumPy 1.24 (Debian's) is in the first range and not in the second.
		code, out, errOut := rxeq("run", "--backend", "oracle,numpy", "--ledger", writeLedger(">=1.24 <2.0"), filepath.Join(dir, "programs", "m.rx"))
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(MatchRegexp(`python-maximum-signed-zero\s+f\s+\d+\s+numpy\s+\S+\s+XFAIL`))
		code, out, errOut = rxeq("run", "--backend", "oracle,numpy", "--ledger", writeLedger("<1.24"), filepath.Join(dir, "programs", "m.rx"))
		Expect(code).To(Equal(1), out+errOut)
		Expect(out).NotTo(ContainSubstring("XFAIL"))
		Expect(out).To(MatchRegexp(`python-maximum-signed-zero\s+f\s+\d+\s+numpy\s+\S+\s+FAIL`))
	})

	It("turns torch's known signed-zero discrepancies into xfail with the checked-in ledger, and its position dependence too", Label("torch"), func() {
		if err := builtin.Available(executor.Torch); err != nil {
			if os.Getenv("RXEQ_REQUIRE_TORCH") != "" {
				Fail("libtorch is required here (RXEQ_REQUIRE_TORCH is set) but: " + err.Error())
			}
			Skip("the torch executor needs libtorch: " + err.Error())
		}
		js := filepath.Join(GinkgoT().TempDir(), "r.json")
		// The torch entries' programs (the other executors' programs fail
		// through torch too where they share its kernels, and are counted
		// by their own specs).
		progs, err := filepath.Glob("../../ledger/programs/torch-*.rx")
		Expect(err).NotTo(HaveOccurred())
		Expect(progs).To(HaveLen(6))
		code, out, errOut := rxeq(append([]string{"run", "--backend", "oracle,torch", "--invariance", "--strict", "--json", js}, progs...)...)
		Expect(code).To(Equal(0), out+errOut)
		st := statuses(readReport(js))
		for _, name := range []string{"torch-maximum-signed-zero/f/b3/torch", "torch-minimum-signed-zero/f/b64/torch",
			"torch-relu-signed-zero/f/b1/torch", "torch-max-reduce-signed-zero/f/b64/torch",
			"torch-maximum-signed-zero/f/b64/torch/invariance", "torch-minimum-signed-zero/f/b64/torch/invariance",
			"torch-sigmoid-position/f0/b3/torch/invariance", "torch-sigmoid-underflow/f/b4/torch"} {
			Expect(st).To(HaveKeyWithValue(name, reports.StatusXFail), name)
		}
		Expect(st).To(HaveKeyWithValue("torch-relu-signed-zero/f/b64/oracle/invariance", reports.StatusPass))
		Expect(out).To(MatchRegexp(fmt.Sprintf(`\d+ passed, 0 failed, 0 errors, %d xfail, 0 xpass`, 14)))
	})
})

var _ = Describe("rxeq fuzz --json", func() {
	It("writes the findings table, the distinct findings and the ledger checks", func() {
		dir := GinkgoT().TempDir()
		js := filepath.Join(dir, "fuzz.json")
		code, out, errOut := rxeq("fuzz", "--executors", "oracle,fallback", "--isolate=false", "--count", "4", "--edges", "--out", filepath.Join(dir, "f"), "--json", js)
		Expect(code).To(Equal(0), out+errOut)
		b, err := os.ReadFile(js)
		Expect(err).NotTo(HaveOccurred())
		var m map[string]any
		Expect(json.Unmarshal(b, &m)).To(Succeed())
		Expect(m).To(HaveKeyWithValue("schema", "rxeq.fuzz/v1"))
		Expect(m).To(HaveKeyWithValue("programs", 4.0))
		Expect(m).To(HaveKeyWithValue("table", BeEmpty()))
		Expect(m).To(HaveKeyWithValue("distinct", BeEmpty()))
		Expect(m).To(HaveKeyWithValue("ledger", BeEmpty()), "no entry is about the fallback")
		Expect(out).To(MatchRegexp(`(?m)^4 programs, 0 findings, [0-9.]+ programs/s; \d+ output elements excused as float32 rounding noise; 0 new, 0 xfail, 0 distinct; ledger 0 xfail, 0 xpass$`))
	})
})
