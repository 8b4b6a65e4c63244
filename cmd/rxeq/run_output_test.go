package main

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/lock"
	"github.com/rextio/rxeq/reports"
	"github.com/rextio/rxeq/tensor"
)

// rowRE matches the table row of case c, up to its STATUS column, and
// captures the PREP and TIME columns.
func rowRE(c reports.Case) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`(?m)^%s\s+%s\s+%d\s+%s\s+\S+\s+[A-Z]+\s+\S+\s+\S+\s+(\S+)\s+(\S+)$`,
		regexp.QuoteMeta(c.Scenario), regexp.QuoteMeta(c.Function), c.Batch, regexp.QuoteMeta(c.Executor)))
}

// lastLine returns the last line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

var _ = Describe("rxeq run's output", Label("e2e"), func() {
	var jsonPath string
	BeforeEach(func() { jsonPath = filepath.Join(GinkgoT().TempDir(), "r.json") })

	It("shows each case once, plain progress on stderr that names no case, and the closing line last", func() {
		code, out, errOut := rxeq("run", "--backend", "oracle,fallback", "--json", jsonPath,
			"../../scenarios/reference.rx", "../../scenarios/error.rx")
		Expect(code).To(Equal(0), out+errOut)
		rep := readReport(jsonPath)
		Expect(rep.Cases).To(HaveLen(22)) // (9 + 2 groups) × 2 executors
		all := out + errOut
		for _, c := range rep.Cases {
			Expect(rowRE(c).FindAllString(all, -1)).To(HaveLen(1), "%s/%s/b%d/%s", c.Scenario, c.Function, c.Batch, c.Executor)
			Expect(strings.Count(all, c.Scenario+"/"+c.Function+"/b")).To(BeZero(), "a case named outside the table")
		}
		progress := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		Expect(len(progress)).To(And(BeNumerically(">=", 1), BeNumerically("<=", 11)))
		for _, l := range progress {
			Expect(l).To(MatchRegexp(`^rxeq run: \d+% \(\d+/11 groups, \d+ cases, 0 failed\) [0-9.]+s$`))
		}
		Expect(progress[len(progress)-1]).To(HavePrefix("rxeq run: 100% (11/11 groups, 22 cases, 0 failed)"))
		Expect(lastLine(out)).To(Equal("25 passed, 0 failed"))
	})

	It("shows the preparation in PREP, on the first case of each scenario and executor, and TIME without it", func() {
		code, out, errOut := rxeq("run", "--backend", "oracle,fallback", "--json", jsonPath,
			"../../scenarios/reference.rx", "../../scenarios/error.rx")
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(MatchRegexp(`(?m)^SCENARIO\s+FUNCTION\s+BATCH\s+EXECUTOR\s+PATH\s+STATUS\s+MAX ABS\s+MAX ULP\s+PREP\s+TIME$`))
		rep := readReport(jsonPath)
		prepared := map[string]int{}
		for _, c := range rep.Cases {
			m := rowRE(c).FindStringSubmatch(out)
			Expect(m).NotTo(BeNil(), c.Name())
			if c.Timing.Prepare > 0 {
				Expect(m[1]).To(MatchRegexp(`^[0-9.]+(ms|s)$`), c.Name())
				prepared[c.Scenario+" "+c.Executor]++
			} else {
				Expect(m[1]).To(Equal("-"), c.Name())
			}
			Expect(m[2]).To(MatchRegexp(`^[0-9.]+(ms|s)$`), c.Name())
		}
		for key, n := range prepared {
			Expect(n).To(Equal(1), key)
		}
		Expect(out).To(MatchRegexp(`(?m)^prepare: oracle \S+ \(2 programs\), fallback \S+ \(2 programs\)$`))
	})

	It("prints the failures before the summary, so the closing line stays last", func() {
		code, out, _ := rxeq("run", "--backend", "oracle,fallback", "testdata/badlock.rx")
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring("--- FAIL bad-lock/score/lock"))
		Expect(strings.Index(out, "--- FAIL")).To(BeNumerically("<", strings.Index(out, "locks ")))
		Expect(lastLine(out)).To(MatchRegexp(`^\d+ passed, 1 failed$`))
	})
})

var _ = Describe("the run table", func() {
	res := &harness.Result{
		Cases: []harness.Case{
			{Scenario: "s", Function: "f", Batch: 1, Executor: "native", Path: "native", Status: harness.StatusPass,
				Timing: harness.Timing{Prepare: 2500 * time.Millisecond, Inputs: time.Millisecond, Execute: 2 * time.Millisecond}},
			{Scenario: "s", Function: "f", Batch: 16, Executor: "native", Path: "native", Status: harness.StatusPass,
				Timing: harness.Timing{Execute: 4 * time.Millisecond, Compare: 250 * time.Microsecond}},
			{Scenario: "s", Function: "f", Batch: 1, Executor: "ext", Path: "ext", Status: harness.StatusSkip},
		},
		Preparations: []harness.Preparation{
			{Scenario: "s", Executor: "native", Duration: 2500 * time.Millisecond, Compiler: "cc 12"},
			{Scenario: "t", Executor: "native", Duration: 3 * time.Millisecond, Compiler: "cc 12", Cached: true},
		},
		Wall: 3 * time.Second,
	}

	It("splits PREP from TIME", func() {
		var b bytes.Buffer
		printTable(&b, res)
		Expect(b.String()).To(MatchRegexp(`(?m)^s\s+f\s+1\s+native\s+native\s+PASS\s+-\s+-\s+2\.50s\s+3\.0ms$`))
		Expect(b.String()).To(MatchRegexp(`(?m)^s\s+f\s+16\s+native\s+native\s+PASS\s+-\s+-\s+-\s+4\.2ms$`))
	})

	It("shows NaN/Inf as the greatest difference of a case where a NaN or an infinity disagrees, and a lock's time", func() {
		inf := &harness.Result{
			Cases: []harness.Case{{Scenario: "s", Function: "f", Batch: 1, Executor: "native", Path: "native", Status: harness.StatusFail,
				Outputs: []compare.OutputMetrics{
					compare.ToOracle("y", &tensor.Tensor{DType: tensor.Float64, Shape: []int{2}, F64: []float64{1, math.Inf(1)}},
						&tensor.Tensor{DType: tensor.Float32, Shape: []int{2}, F32: []float32{1, 3}}, compare.DefaultTolerance()),
				}}},
			Locks: []harness.LockCase{{Scenario: "s", Function: "f", Result: lock.Result{OK: true, Func: "rx_fn_f"}, Duration: 1500 * time.Microsecond}},
		}
		Expect(inf.Cases[0].Outputs[0].MaxAbsDiff).To(BeZero(), "the finite elements agree")
		var b bytes.Buffer
		printTable(&b, inf)
		Expect(b.String()).To(MatchRegexp(`(?m)^s\s+f\s+1\s+native\s+native\s+FAIL\s+NaN/Inf\s+`))
		Expect(b.String()).To(MatchRegexp(`(?m)^s\s+f\s+-\s+lock\s+rx_fn_f\s+PASS\s+-\s+-\s+-\s+1\.5ms$`))
	})

	It("sums the preparations per executor and ends with the closing line", func() {
		var b bytes.Buffer
		printSummary(&b, res)
		Expect(b.String()).To(Equal("\n2 passed, 0 failed, 0 errors, 1 skipped; locks 0/0 held; 3s\n" +
			"prepare: native 2.50s (2 programs, 1 cached)\n" +
			"2 passed, 0 failed, 1 skipped\n"))
	})
})
