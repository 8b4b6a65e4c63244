package scenarios_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/scenarios"
)

var _ = Describe("Catalog", func() {
	It("embeds the .rx files, the reference scenario first", func() {
		Expect(scenarios.Names()).To(Equal([]string{
			"scenarios/reference.rx", "scenarios/rounds.rx", "scenarios/edge.rx", "scenarios/error.rx", "scenarios/op_accuracy.rx", "scenarios/op_edges.rx",
			"scenarios/tiles.rx",
		}))
		for _, s := range scenarios.Sources() {
			Expect(s.Text).NotTo(BeEmpty())
		}
	})

	It("parses and checks every file", func() {
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, f := range files {
			names = append(names, f.Scenario)
			_, err := program.Lower(f)
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(names).To(Equal([]string{"reference-scoring", "parameter-rounds", "edge-values", "remainder-by-zero", "op-accuracy", "op-edges", "row-tiles"}))
	})

	It("holds the reference scenario of DESIGN.md", func() {
		f, err := scenarios.Lookup("reference-scoring")
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Batches).To(Equal([]int{1, 16, 128}))
		var fns []string
		for _, fn := range f.Funcs {
			fns = append(fns, fn.Name)
			x := fn.Params[0]
			Expect(x.Name).To(Equal("x"))
			Expect(x.Type.String()).To(Equal("[B][32]float32"))
			for _, r := range fn.Results[:2] {
				Expect(r.Type.String()).To(Equal("[B][8]float32"))
			}
			Expect(fn.Results[2].Type.String()).To(Equal("[B]int64"))
			// Every function is locked on its loop and on its if.
			Expect(fn.Locks[0].Text).To(Equal("for (int64_t round_idx = 0; round_idx < 4; round_idx++) {"))
			Expect(fn.Locks).To(ContainElement(HaveField("Text", `\bif \(rx_t\d+\) \{`)))
		}
		Expect(fns).To(Equal([]string{"score_linear", "score_mlp", "score_pipeline"}))
		pipe := f.Func("score_pipeline")
		phase := pipe.Params[len(pipe.Params)-1]
		Expect(phase.Name).To(Equal("phase"))
		Expect(phase.Type.IsIntScalar()).To(BeTrue())
		Expect(f.Func("score_pipeline").Params[3].Type.String()).To(Equal("[32][32]float32")) // w1: 32 hidden units
	})

	It("holds a loop bounded by a parameter, edge values and an expected error", func() {
		rounds, err := scenarios.Lookup("rounds")
		Expect(err).NotTo(HaveOccurred())
		Expect(rounds.Funcs[0].Params[3].Name).To(Equal("rounds"))
		Expect(rounds.Funcs[0].Params[3].Type.IsIntScalar()).To(BeTrue())
		edge, err := scenarios.Lookup("scenarios/edge.rx")
		Expect(err).NotTo(HaveOccurred())
		var kinds []string
		for _, in := range edge.Inputs {
			if in.Dist.Edge != "" {
				kinds = append(kinds, in.Dist.Edge)
			}
		}
		Expect(kinds).To(Equal([]string{"large", "ties", "zeros", "specials"}))
		errs, err := scenarios.Lookup("remainder-by-zero")
		Expect(err).NotTo(HaveOccurred())
		Expect(errs.ExpectError).To(Equal("CheckedRem: division by zero (round_idx=0)"))
	})

	It("says which scenarios exist when a name is unknown", func() {
		_, err := scenarios.Lookup("nope")
		Expect(errors.Is(err, scenarios.ErrNotFound)).To(BeTrue())
		Expect(err.Error()).To(ContainSubstring("scenarios/reference.rx"))
	})
})
