package fuzz_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/program/ir"
)

// editedTrip is the real round trip with old replaced by new in the
// imported program: an importer that gets an op wrong.
func editedTrip(old, new string) fuzz.Trip {
	return func(p *ir.Program, fn string) (*onnx.Imported, error) {
		imp, err := fuzz.ONNXTrip(p, fn)
		if err == nil {
			imp.Source = []byte(strings.ReplaceAll(string(imp.Source), old, new))
		}
		return imp, err
	}
}

// errExport is the failure of refusingTrip.
var errExport = errors.New("export: MatMul refused on purpose")

// refusingTrip is the real round trip, except that it fails every
// function of a program that has a MatMul, as a broken exporter would.
func refusingTrip(p *ir.Program, fn string) (*onnx.Imported, error) {
	found := false
	ir.Walk(p.Func(fn).Body, func(in ir.Instr) {
		if o, ok := in.(*ir.Op); ok && o.Kind == ir.MatMul {
			found = true
		}
	})
	if found {
		return nil, errExport
	}
	return fuzz.ONNXTrip(p, fn)
}

// tripOnly checks the round trip alone, with trip.
func tripOnly(trip fuzz.Trip) *fuzz.Checker {
	return &fuzz.Checker{ReferenceOnly: true, RoundTrip: trip}
}

// twoSyms has a second symbolic dimension: the language takes it, a
// scenario and so the import do not.
const twoSyms = `//rx:batches 2
//rx:input x normal(0, 1)
package p

func f(x [B][N]float32) (y [B][N]float32) {
	y = Tanh(x)
	return
}
`

// int64Tensor has an int64 tensor parameter.
const int64Tensor = `//rx:batches 2
//rx:input x normal(0, 1)
package p

func g(x [B][3]float32, k [B]int64) (y [B][3]float32) {
	y = Tanh(x)
	return
}
`

var _ = Describe("the ONNX round trip (Checker.RoundTrip)", func() {
	It("holds for 200 generated programs and 200 edge-seeking ones: no finding", func() {
		c := tripOnly(fuzz.ONNXTrip)
		for _, cfg := range []fuzz.Config{{}, {Edges: true}} {
			for seed := uint64(1); seed <= 200; seed++ {
				p := fuzz.Generate(seed, cfg)
				rep, err := c.Check(context.Background(), p.Source)
				Expect(err).NotTo(HaveOccurred())
				Expect(rep.Findings).To(BeEmpty(), "seed %d (edges %v)\n%s", seed, cfg.Edges, p.Source)
			}
		}
	})

	It("reports an importer that gets an op wrong, reduced, with its category and a repro.sh", func() {
		c := fuzz.Campaign{Seed: 1, Count: 40, Checker: tripOnly(editedTrip("Tanh(", "Sigmoid(")), Reducer: fuzz.Reducer{MaxTests: 300}}
		c.Commands = func(seed uint64, f fuzz.Finding, file string) (string, string) { return "rerun", "check " + file }
		st, out, files := session(c)
		Expect(st.Findings).To(BeNumerically(">", 0), out)
		Expect(files).NotTo(BeEmpty())
		rec := st.Records[0]
		Expect(rec.Executor).To(Equal(string(fuzz.RoundTripName)))
		Expect(rec.Reference).To(Equal("oracle"))
		Expect(rec.Category).To(Equal(fuzz.CatRoundTrip))
		Expect(rec.Kind).To(Equal(fuzz.KindMismatch))
		Expect(rec.Ops).To(ContainElement("Tanh"))
		Expect(rec.Detail).To(ContainSubstring("differs from the original's under the oracle"))
		Expect(rec.Statements).To(BeNumerically("<=", 4), "reduced to the Tanh and its result")
		Expect(out).To(ContainSubstring("FOUND seed "))
		Expect(out).To(ContainSubstring("onnx-roundtrip vs oracle: mismatch in "))
		Expect(rec.Repro).To(Equal("repro.sh"))
	})

	It("saves a reduced program and a repro.sh that export and import it", func() {
		dir := GinkgoT().TempDir()
		c := fuzz.Campaign{Seed: 1, Count: 40, Checker: tripOnly(editedTrip("Tanh(", "Sigmoid(")), Reducer: fuzz.Reducer{MaxTests: 300}, Dir: dir}
		st, _, _ := session(c)
		Expect(st.Records).NotTo(BeEmpty())
		rec := st.Records[0]
		small, err := os.ReadFile(filepath.Join(dir, rec.ID, rec.Reduced))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(small)).To(ContainSubstring("signature: onnx-roundtrip vs oracle, mismatch in " + rec.Func))
		Expect(string(small)).To(ContainSubstring("Tanh("))
		sh, err := os.ReadFile(filepath.Join(dir, rec.ID, "repro.sh"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(sh)).To(HavePrefix("#!/bin/sh\n"))
		Expect(string(sh)).To(ContainSubstring("rxeq export --format onnx --func " + rec.Func + " -o " + rec.Func + ".onnx " + rec.Reduced + " || exit 1\n"))
		Expect(string(sh)).To(ContainSubstring("rxeq import --func " + rec.Func + " -o " + rec.Func + ".imported.rx " + rec.Func + ".onnx || exit 1\n"))
		Expect(string(sh)).To(ContainSubstring("rxeq reduce --executors oracle --roundtrip --max-tests 1 " + rec.Reduced))
	})

	It("reports an exporter that fails as a round-trip finding of its own kind, kept while the program shrinks", func() {
		c := tripOnly(refusingTrip)
		for seed := uint64(1); seed <= 40; seed++ {
			p := fuzz.Generate(seed, fuzz.Config{})
			rep, err := c.Check(context.Background(), p.Source)
			Expect(err).NotTo(HaveOccurred())
			if rep.OK() {
				continue
			}
			f := rep.Findings[0]
			Expect(f.Kind).To(Equal(fuzz.KindRoundTrip))
			Expect(f.Category()).To(Equal(fuzz.CatRoundTrip))
			Expect(f.Detail).To(Equal(errExport.Error()))
			small, _, err := fuzz.Reducer{MaxTests: 300}.ReduceFinding(context.Background(), p.Source, f, c)
			Expect(err).To(Or(Not(HaveOccurred()), MatchError(fuzz.ErrBudget)))
			Expect(fuzz.ProgramOps(small)).To(ContainElement("MatMul"))
			Expect(fuzz.CountStmts(small)).To(BeNumerically("<", fuzz.CountStmts(p.Source)))
			return
		}
		Fail("no program of the first 40 has a MatMul")
	})

	It("lists its findings after the executors' and runs beside them", func() {
		c := &fuzz.Checker{Executors: []executor.Executor{skewed{name: "skewed", delta: 0.01, trigger: hasTanhOfRank2}},
			RoundTrip: editedTrip("Tanh(", "Sigmoid(")}
		for seed := uint64(1); seed <= 40; seed++ {
			p := fuzz.Generate(seed, fuzz.Config{})
			rep, err := c.Check(context.Background(), p.Source)
			Expect(err).NotTo(HaveOccurred())
			var names []executor.Name
			for _, f := range rep.Findings {
				names = append(names, f.Executor)
			}
			first, last := slices.Index(names, fuzz.RoundTripName), -1
			for i, n := range names {
				if n == "skewed" {
					last = i
				}
			}
			if first < 0 || last < 0 {
				continue
			}
			Expect(last).To(BeNumerically("<", first), "%v", names)
			return
		}
		Fail("no program of the first 40 gave both findings")
	})

	It("leaves out what the import refuses by design: a second symbolic dimension, an int64 tensor parameter", func() {
		called := 0
		c := &fuzz.Checker{Executors: []executor.Executor{fallback.Executor{}}, RoundTrip: func(p *ir.Program, fn string) (*onnx.Imported, error) {
			called++
			return nil, errExport
		}}
		for _, src := range []string{twoSyms, int64Tensor} {
			// Their inputs cannot be generated (a scenario could not
			// run them either), so Check fails; what counts is that the
			// round trip was not attempted.
			_, _ = c.Check(context.Background(), []byte(src))
		}
		Expect(called).To(BeZero())
		rep, err := c.Check(context.Background(), []byte(rowsProgram))
		Expect(err).NotTo(HaveOccurred())
		Expect(called).To(Equal(1), "an ordinary function is round-tripped")
		Expect(rep.Findings).To(HaveLen(1))
		Expect(rep.Findings[0].Kind).To(Equal(fuzz.KindRoundTrip))
	})
})
