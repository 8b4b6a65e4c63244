package onnx_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/scenarios"
	"github.com/rextio/rxeq/tensor"
	"github.com/rextio/rxeq/tensor/npy"
)

// evalCase is one run of an exported model.
type evalCase struct {
	name   string
	p      *ir.Program
	fn     string
	inputs map[string]*tensor.Tensor
	tol    float64 // absolute and relative; 1e-5 when 0
}

// agree runs the exported models of the cases on their inputs with
// testdata/evaluate.py (ONNX's op semantics written out in NumPy,
// independent of the exporter; one Python process for all cases) and
// compares each with the fallback interpreter's run: the same error, or
// int64 outputs equal and float32 ones within 1e-5 (absolute and
// relative: NumPy's and Go's transcendental functions round differently),
// NaN where NaN, infinities equal.
func agree(cases ...evalCase) {
	GinkgoHelper()
	root := GinkgoT().TempDir()
	script, err := filepath.Abs("testdata/evaluate.py")
	Expect(err).NotTo(HaveOccurred())
	args := []string{script}
	sigs := make([]*onnx.Signature, len(cases))
	dirs := make([]string, len(cases))
	for k, c := range cases {
		sig, err := onnx.Describe(c.p, c.fn)
		Expect(err).NotTo(HaveOccurred())
		sigs[k] = sig
		dirs[k] = filepath.Join(root, fmt.Sprint(k))
		Expect(os.Mkdir(dirs[k], 0o755)).To(Succeed())
		model := filepath.Join(dirs[k], "model.onnx")
		Expect(os.WriteFile(model, export(c.p, c.fn), 0o644)).To(Succeed())
		for _, in := range sig.Inputs {
			Expect(npy.WriteFile(filepath.Join(dirs[k], "in_"+in.Name+".npy"), c.inputs[in.Value.Name])).To(Succeed())
		}
		args = append(args, model, dirs[k])
	}
	out, err := exec.Command(python, args...).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "evaluate.py: %s", out)
	for k, c := range cases {
		sig := sigs[k]
		got := map[string]*tensor.Tensor{}
		names := []string{}
		for _, o := range sig.Outputs {
			names = append(names, o.Name)
		}
		if sig.Error != "" {
			names = append(names, sig.Error)
		}
		for _, n := range names {
			t, err := npy.ReadFile(filepath.Join(dirs[k], "out_"+n+".npy"))
			Expect(err).NotTo(HaveOccurred())
			got[n] = t
		}
		compare(c, sig, got)
	}
}

func compare(c evalCase, sig *onnx.Signature, got map[string]*tensor.Tensor) {
	GinkgoHelper()
	want, wantErr := fallback.Run(context.Background(), c.p.Func(c.fn), c.inputs)
	var gotErr error
	if sig.Error != "" {
		gotErr = sig.Err(got[sig.Error].I64)
	}
	if wantErr != nil {
		Expect(gotErr).To(HaveOccurred(), "%s: fallback failed with %v", c.name, wantErr)
		Expect(gotErr.Error()).To(Equal(wantErr.Error()), c.name)
		return
	}
	Expect(gotErr).NotTo(HaveOccurred(), c.name)
	for _, o := range sig.Outputs {
		w, g := want[o.Value.Name], got[o.Name]
		Expect(g.Shape).To(Equal(w.Shape), "%s: output %s", c.name, o.Name)
		if w.DType == tensor.Int64 {
			Expect(g.I64).To(Equal(w.I64), "%s: output %s", c.name, o.Name)
			continue
		}
		Expect(g.DType).To(Equal(tensor.Float32))
		for i := range w.F32 {
			a, b := float64(w.F32[i]), float64(g.F32[i])
			if a == b {
				continue
			}
			if math.IsNaN(a) || math.IsNaN(b) {
				Expect(math.IsNaN(a) && math.IsNaN(b)).To(BeTrue(), "%s: output %s[%d]: want %v got %v", c.name, o.Name, i, a, b)
				continue
			}
			tol := c.tol
			if tol == 0 {
				tol = 1e-5
			}
			Expect(math.Abs(a-b)).To(BeNumerically("<=", tol+tol*math.Abs(a)), "%s: output %s[%d]: want %v got %v", c.name, o.Name, i, a, b)
		}
	}
}

var _ = Describe("The exported model's meaning", func() {
	It("agrees with the fallback interpreter on every catalog function at its batches, evaluated op by op in NumPy", func() {
		requireONNX()
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		var cases []evalCase
		for _, f := range files {
			p, err := program.Lower(f)
			Expect(err).NotTo(HaveOccurred())
			for _, fn := range f.Funcs {
				batches := f.Batches
				if len(batches) == 0 {
					batches = []int{4}
				}
				for _, batch := range batches[:min(2, len(batches))] {
					inputs, err := harness.GenerateInputs(f, fn, batch, f.Seed, nil)
					Expect(err).NotTo(HaveOccurred())
					cases = append(cases, evalCase{name: fmt.Sprintf("%s %s B=%d", f.Name, fn.Name, batch), p: p, fn: fn.Name, inputs: inputs})
				}
			}
		}
		Expect(len(cases)).To(BeNumerically(">=", 10))
		agree(cases...)
	})
})

var _ = Describe("Fuzzed programs", func() {
	It("export as models the checker accepts and that agree with the fallback interpreter", func() {
		requireONNX()
		var cases []evalCase
		models := map[string][]byte{}
		for seed := uint64(1); seed <= 40; seed++ {
			// Edge-seeking programs (NaN, infinities, signed zeros) are for
			// the executors' comparison with the oracle; testdata/evaluate.py,
			// NumPy at a fixed tolerance, is no judge of those.
			gp := fuzz.Generate(seed, fuzz.Config{Exclude: fuzz.FeatEdges})
			// Fuzzed programs may declare locals nothing reads: program.Parse, as
			// the fuzzer does, not ParseScenario.
			f, err := program.Parse(fmt.Sprintf("fuzz-%d.rx", seed), gp.Source)
			Expect(err).NotTo(HaveOccurred())
			p, err := program.Lower(f)
			Expect(err).NotTo(HaveOccurred())
			for _, fn := range f.Funcs {
				name := fmt.Sprintf("seed%d-%s", seed, fn.Name)
				models[name] = export(p, fn.Name)
				inputs, err := harness.GenerateInputs(f, fn, f.Batches[0], f.Seed, nil)
				Expect(err).NotTo(HaveOccurred())
				cases = append(cases, evalCase{name: name, p: p, fn: fn.Name, inputs: inputs, tol: 1e-4})
			}
		}
		for name, msg := range checkModels(models) {
			Expect(msg).To(BeEmpty(), name)
		}
		agree(cases...)
	})
})
