package rxginkgo_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/rxginkgo"
	"github.com/rextio/rxeq/tensor"
)

// failureOf calls body(c) through reflect, as ginkgo calls a table body,
// and returns the failure message and the location ginkgo would report for
// it (the first stack frame outside ginkgo helpers).
func failureOf(body func(rxginkgo.Case), c rxginkgo.Case) (msg string, at types.CodeLocation) {
	RegisterFailHandler(func(message string, callerSkip ...int) {
		if msg == "" {
			skip := 0
			if len(callerSkip) > 0 {
				skip = callerSkip[0]
			}
			msg, at = message, types.NewCodeLocation(skip+1)
		}
	})
	defer RegisterFailHandler(Fail)
	reflect.ValueOf(body).Call([]reflect.Value{reflect.ValueOf(c)})
	return msg, at
}

var _ = Describe("where a failing entry points", Serial, func() {
	It("starts the message with the function's .rx line and locates the failure outside reflect", func() {
		dir := GinkgoT().TempDir()
		path := filepath.Join(dir, "scorer.rx")
		src := "//rx:scenario loc\n//rx:batches 2\n//rx:input x normal(0, 1)\npackage p\n\nfunc f(x [B][4]float32) (y [B][4]float32) {\n\ty = Tanh(x)\n\treturn\n}\n"
		Expect(os.WriteFile(path, []byte(src), 0o644)).To(Succeed())
		f, err := program.ParseScenario(path, []byte(src))
		Expect(err).NotTo(HaveOccurred())
		c := rxginkgo.Case{File: f, Function: "f", Batch: 2, Executor: "off-by-one",
			Options: harness.Options{Executors: []executor.Executor{offByOne{}}}}
		msg, at := failureOf(rxginkgo.AssertEntry, c)
		Expect(msg).To(HavePrefix(path + ":6: loc/f/b2/off-by-one\n"))
		Expect(msg).To(ContainSubstring("y: "))
		Expect(strings.Count(msg, "loc/f/b2/off-by-one")).To(Equal(1), "the case is named once:\n"+msg)
		Expect(at.FileName).NotTo(ContainSubstring("reflect"))
		Expect(strings.HasSuffix(at.FileName, "rxginkgo/rxginkgo.go")).To(BeTrue(), at.String())
	})

	It("points at the //rx:tolerance line whose bound failed, naming the case once", func() {
		dir := GinkgoT().TempDir()
		path := filepath.Join(dir, "scorer.rx")
		src := "//rx:scenario loc\n//rx:batches 2\n//rx:input x normal(0, 1)\n//rx:tolerance y rtol=1e-5 atol=1e-6\npackage p\n\n" +
			"func f(x [B][4]float32) (y [B][4]float32, z [B][4]float32) {\n\ty = Tanh(x)\n\tz = Exp(x)\n\treturn\n}\n"
		Expect(os.WriteFile(path, []byte(src), 0o644)).To(Succeed())
		f, err := program.ParseScenario(path, []byte(src))
		Expect(err).NotTo(HaveOccurred())
		c := rxginkgo.Case{File: f, Function: "f", Batch: 2, Executor: "off-by-one",
			Options: harness.Options{Executors: []executor.Executor{offByOne{}}}}
		msg, _ := failureOf(rxginkgo.AssertEntry, c)
		Expect(msg).To(HavePrefix(path + ":4: loc/f/b2/off-by-one (function f at " + path + ":7)\n"))
		Expect(msg).To(ContainSubstring("  y: bound set by the //rx:tolerance at " + path + ":4\n"))
		Expect(msg).To(ContainSubstring("  z: default bound (no //rx:tolerance for it)\n"))
		Expect(msg).To(MatchRegexp(`\n    y: 1 / 8 mismatched`))
		Expect(strings.Count(msg, "loc/f/b2/off-by-one")).To(Equal(1), msg)
	})

	It("names the line of the suite that declared the table, which no Go frame of a table body can", func() {
		dir := GinkgoT().TempDir()
		path := filepath.Join(dir, "scorer.rx")
		src := "//rx:scenario loc\n//rx:batches 2\n//rx:input x normal(0, 1)\npackage p\n\nfunc f(x [B][4]float32) (y [B][4]float32) {\n\ty = Tanh(x)\n\treturn\n}\n"
		Expect(os.WriteFile(path, []byte(src), 0o644)).To(Succeed())
		f, err := program.ParseScenario(path, []byte(src))
		Expect(err).NotTo(HaveOccurred())
		c := rxginkgo.Case{File: f, Function: "f", Batch: 2, Executor: "off-by-one",
			Options: harness.Options{Executors: []executor.Executor{offByOne{}}}}
		suite := types.CodeLocation{FileName: "/home/me/scorer/scorer_test.go", LineNumber: 12}
		msg, _ := failureOf(rxginkgo.DeclaredBody(suite, "rxginkgo.Table"), c)
		Expect(msg).To(HavePrefix(path + ":6: loc/f/b2/off-by-one\n  table: rxginkgo.Table at /home/me/scorer/scorer_test.go:12\n"))
	})

	It("prints a file that does not check as its errors' text, not a dump of the error value", func() {
		_, err := program.ParseScenario("bad.rx", []byte("package p\nfunc f(x [B]float64) (y [B]float32) { y = x; return }\n"))
		Expect(err).To(HaveOccurred())
		msg, _ := failureOf(rxginkgo.AssertEntry, rxginkgo.Case{Err: err})
		Expect(msg).To(Equal("the file does not check:\n" + err.Error()))
		Expect(msg).NotTo(ContainSubstring("program.ErrorList"))
	})
})

// offByOne is the fallback interpreter with 1 added to the first element
// of every float32 output: a broken executor every comparison must catch.
type offByOne struct{}

func (offByOne) Name() executor.Name { return "off-by-one" }

func (offByOne) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	q, err := fallback.Executor{}.Prepare(ctx, f, p)
	return offByOnePrepared{q}, err
}

type offByOnePrepared struct{ executor.Prepared }

func (o offByOnePrepared) Run(ctx context.Context, fn string, in map[string]*tensor.Tensor) (executor.Outcome, error) {
	out, err := o.Prepared.Run(ctx, fn, in)
	for _, t := range out.Outputs {
		if err == nil && t != nil && len(t.F32) > 0 {
			t.F32[0]++
		}
	}
	return out, err
}

var _ = Describe("where a lock is checked", Serial, func() {
	It("fails every entry of a function whose lock fails, so no label filter or focus leaves it out", func() {
		// The entry of the executor that cannot run must fail on the lock,
		// not on CI's demand that torch run.
		GinkgoT().Setenv("RXEQ_REQUIRE_TORCH", "")
		f, err := program.ParseScenario("testdata/badlock.rx", mustRead("testdata/badlock.rx"))
		Expect(err).NotTo(HaveOccurred())
		f.Batches = []int{1, 2}
		opts := harness.Options{
			Executors:   []executor.Executor{fallback.Executor{}, renamed{fallback.Executor{}, "fallback-again"}},
			Unavailable: []executor.Unavailable{{Executor: executor.Torch, Reason: "no libtorch here"}},
		}
		cases := rxginkgo.PlannedCases([]*program.File{f}, opts)
		Expect(cases).To(HaveLen(2 * 2 * 3))
		failed := 0
		for _, c := range cases {
			if c.Function != "score" {
				continue
			}
			msg, _ := failureOf(rxginkgo.AssertEntry, c)
			Expect(msg).To(ContainSubstring("LOCK bad-lock/score:"), c.String())
			Expect(msg).To(ContainSubstring("round_idx < 4"), c.String())
			failed++
		}
		// Every batch and every executor, the one that cannot run here too.
		Expect(failed).To(Equal(2 * 3))
		for _, c := range cases {
			if c.Function == "decoy" && c.Unavailable == "" {
				msg, _ := failureOf(rxginkgo.AssertEntry, c)
				Expect(msg).To(BeEmpty(), c.String())
			}
		}
	})
})

// renamed is an executor under another name.
type renamed struct {
	executor.Executor
	name executor.Name
}

func (r renamed) Name() executor.Name { return r.name }

var _ = Describe("two files with one scenario name", func() {
	It("are one failing entry naming both files, not rows nobody can tell apart", func() {
		root := GinkgoT().TempDir()
		src := []byte("//rx:input x normal(0, 1)\npackage p\n\nfunc f(x [B][4]float32) (y [B][4]float32) {\n\ty = Tanh(x)\n\treturn\n}\n")
		a, b := filepath.Join(root, "a", "scorer.rx"), filepath.Join(root, "b", "scorer.rx")
		for _, p := range []string{a, b} {
			Expect(os.MkdirAll(filepath.Dir(p), 0o755)).To(Succeed())
			Expect(os.WriteFile(p, src, 0o600)).To(Succeed())
		}
		entries, err := rxginkgo.Entries(root)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(HaveLen(1))
		bad, err := rxginkgo.BadCases(root)
		Expect(err).NotTo(HaveOccurred())
		Expect(bad).To(HaveLen(1))
		Expect(bad[0].String()).To(Equal("duplicate scenario names"))
		failures := InterceptGomegaFailures(func() { rxginkgo.AssertCase(bad[0]) })
		Expect(failures).To(HaveLen(1))
		Expect(failures[0]).To(HavePrefix("the files cannot run together:\n"))
		Expect(failures[0]).To(ContainSubstring(`scenario "scorer": declared by ` + a + " and " + b))
	})
})
