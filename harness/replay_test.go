package harness_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/reports"
	"github.com/rextio/rxeq/tensor"
	"github.com/rextio/rxeq/tensor/npy"
)

// save writes t as the .npy file dir/rel, creating directories.
func save(dir, rel string, t *tensor.Tensor) string {
	GinkgoHelper()
	path := filepath.Join(dir, filepath.FromSlash(rel))
	Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
	Expect(npy.WriteFile(path, t)).To(Succeed())
	return path
}

// ramp returns a float32 tensor of the shape holding 0.25, 0.5, ….
func ramp(shape ...int) *tensor.Tensor {
	t := tensor.NewFloat32(shape...)
	for i := range t.F32 {
		t.F32[i] = float32(i+1) * 0.25
	}
	return t
}

// recorder is a fallback executor that keeps the inputs of every run, by
// "function/bBATCH".
type recorder struct {
	mu   sync.Mutex
	seen map[string]map[string]*tensor.Tensor
}

func (r *recorder) options() harness.Options {
	r.seen = map[string]map[string]*tensor.Tensor{}
	return harness.Options{Executors: []executor.Executor{hookExecutor{name: "fallback", inner: fallback.Executor{},
		before: func(ctx context.Context, fn string, in map[string]*tensor.Tensor) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			key := fn
			if x, ok := in["x"]; ok {
				key += "/" + string(rune('0'+x.Shape[0]))
			}
			r.seen[key] = in
			return nil
		}}}}
}

func replayNames(res *harness.Result) []string {
	var out []string
	for _, r := range res.Replays {
		out = append(out, r.String())
	}
	return out
}

var _ = Describe("Run with Options.Inputs", func() {
	ctx := context.Background()

	It("reads every parameter's file, takes the batch from the data and says where each input came from", func() {
		dir := GinkgoT().TempDir()
		x, w := ramp(5, 4), ramp(4, 3)
		x.F32[3] = float32(math.NaN()) // user data may hold NaN and Inf; compared as usual
		x.F32[7] = float32(math.Inf(-1))
		xPath := save(dir, "x.npy", x)
		wPath := save(dir, "lin/w.npy", w)
		var rec recorder
		opts := rec.options()
		opts.Inputs = dir
		res, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(caseNames(res.Cases)).To(Equal([]string{
			"tiny/lin/b5/oracle", "tiny/lin/b5/fallback",
			"tiny/sq/b5/oracle", "tiny/sq/b5/fallback",
		}))
		for _, c := range res.Cases {
			Expect(c.Status).To(Equal(harness.StatusPass), c.Message)
		}
		Expect(harness.Digest(rec.seen["lin/5"]["x"])).To(Equal(harness.Digest(x))) // NaN: compare the bytes
		Expect(rec.seen["lin/5"]["w"]).To(Equal(w))
		Expect(harness.Digest(rec.seen["sq/5"]["x"])).To(Equal(harness.Digest(x)))
		Expect(replayNames(res)).To(Equal([]string{
			"inputs of tiny/lin/b5: w from " + wPath + ", x from " + xPath,
			"inputs of tiny/sq/b5: x from " + xPath,
		}))
		fb := byExecutor(res.Cases, "fallback")[0]
		Expect(fb.Inputs).To(HaveLen(2))
		Expect(fb.Inputs[0].Name).To(Equal("w"))
		Expect(fb.Inputs[0].Source).To(Equal(wPath))
		Expect(fb.Inputs[0].Before).To(Equal(harness.Digest(w)))
	})

	It("looks in SCENARIO/FUNCTION, then FUNCTION, then the directory itself", func() {
		dir := GinkgoT().TempDir()
		save(dir, "tiny/lin/x.npy", ramp(2, 4))
		save(dir, "lin/x.npy", ramp(3, 4))
		save(dir, "x.npy", ramp(4, 4))
		save(dir, "w.npy", ramp(4, 3))
		opts := onlyFallback()
		opts.Inputs = dir
		res, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(caseNames(res.Cases)).To(Equal([]string{
			"tiny/lin/b2/oracle", "tiny/lin/b2/fallback",
			"tiny/sq/b4/oracle", "tiny/sq/b4/fallback",
		}))
		Expect(harness.InputSearchPaths(dir, "tiny", "lin", "b2", "x")).To(Equal([]string{
			filepath.Join(dir, "tiny/lin/b2/inputs/x.npy"), filepath.Join(dir, "tiny/lin/x.npy"),
			filepath.Join(dir, "lin/x.npy"), filepath.Join(dir, "x.npy"),
		}))
	})

	It("replays a dump directory, one group per bN, and generates a parameter without a file", func() {
		dir := GinkgoT().TempDir()
		x3, x7 := ramp(3, 4), ramp(7, 4)
		save(dir, "tiny/lin/b7/inputs/x.npy", x7)
		save(dir, "tiny/lin/b3/inputs/x.npy", x3)
		Expect(os.MkdirAll(filepath.Join(dir, "tiny/lin/b3/outputs"), 0o755)).To(Succeed())
		var rec recorder
		opts := rec.options()
		opts.Inputs = dir
		res, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(caseNames(res.Cases)).To(Equal([]string{
			"tiny/lin/b3/oracle", "tiny/lin/b3/fallback",
			"tiny/lin/b7/oracle", "tiny/lin/b7/fallback",
			"tiny/sq/b1/oracle", "tiny/sq/b1/fallback", // no file: generated at //rx:batches
			"tiny/sq/b4/oracle", "tiny/sq/b4/fallback",
			"tiny/sq/b9/oracle", "tiny/sq/b9/fallback",
		}))
		Expect(rec.seen["lin/3"]["x"]).To(Equal(x3))
		Expect(rec.seen["lin/7"]["x"]).To(Equal(x7))
		// w has no file: it is what the generator gives at that batch.
		f := tinyFile()
		gen, err := harness.GenerateInputs(f, f.Funcs[0], 7, 7, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.seen["lin/7"]["w"]).To(Equal(gen["w"]))
		Expect(res.Replays[1].Generated).To(Equal([]string{"w"}))
		Expect(res.Replays[1].String()).To(HaveSuffix("; generated from //rx:input: w"))
		Expect(res.Replays[2].String()).To(Equal("inputs of tiny/sq/b1: no file; generated from //rx:input: x"))
		Expect(byExecutor(res.Cases, "fallback")[0].Inputs[0].Source).To(BeEmpty()) // w, generated
	})

	It("binds every symbolic dimension from the data, not only the batch", func() {
		src := `//rx:input x normal(0, 1)
//rx:input y normal(0, 1)
package p

func f(x [B][K]float32, y [K]float32) (z [B][K]float32) {
	z = x + y
	return
}
`
		dir := GinkgoT().TempDir()
		save(dir, "x.npy", ramp(2, 6))
		opts := onlyFallback()
		opts.Inputs = dir
		res, err := harness.Run(ctx, []*program.File{parseRx("p.rx", src)}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.OK()).To(BeTrue())
		Expect(byExecutor(res.Cases, "fallback")[0].Outputs[0].Total).To(Equal(12))
	})

	It("replays a dump bit for bit: the same inputs, the same outputs", func() {
		dump := GinkgoT().TempDir()
		var mu sync.Mutex
		collect := func(into *[]harness.GroupTensors) func(harness.GroupTensors) {
			return func(g harness.GroupTensors) {
				mu.Lock()
				defer mu.Unlock()
				*into = append(*into, g)
			}
		}
		var first, second []harness.GroupTensors
		opts := onlyFallback()
		opts.Tensors = collect(&first)
		_, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		var cases []reports.DumpCase
		for _, g := range first {
			cases = append(cases, reports.DumpCase{Name: g.Scenario + "/" + g.Function + "/b" + string(rune('0'+g.Batch)), Inputs: g.Inputs, Outputs: g.Outputs})
		}
		Expect(reports.WriteDump(dump, cases)).To(Succeed())

		opts = onlyFallback()
		opts.Tensors = collect(&second)
		opts.Inputs = dump
		res, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.OK()).To(BeTrue())
		Expect(second).To(HaveLen(len(first)))
		key := func(g harness.GroupTensors) string { return g.Function + string(rune('0'+g.Batch)) }
		want := map[string]harness.GroupTensors{}
		for _, g := range first {
			want[key(g)] = g
		}
		for _, g := range second {
			w, ok := want[key(g)]
			Expect(ok).To(BeTrue(), key(g))
			for name, t := range w.Inputs {
				Expect(harness.Digest(g.Inputs[name])).To(Equal(harness.Digest(t)), "input %s of %s", name, key(g))
			}
			for ex, outs := range w.Outputs {
				for name, t := range outs {
					Expect(harness.Digest(g.Outputs[ex][name])).To(Equal(harness.Digest(t)), "%s output %s of %s", ex, name, key(g))
				}
			}
		}
	})

	DescribeTable("refuses a file it cannot use before running anything, naming it and the fix",
		func(setup func(dir string) string, text ...string) {
			dir := GinkgoT().TempDir()
			inputs := setup(dir)
			opts := onlyFallback()
			opts.Inputs = inputs
			ran := false
			opts.Progress = func(int, int, []harness.Case) { ran = true }
			res, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
			Expect(res).To(BeNil())
			Expect(ran).To(BeFalse())
			Expect(errors.Is(err, harness.ErrInputs)).To(BeTrue(), "%v", err)
			Expect(errors.Is(err, harness.ErrOptions)).To(BeTrue(), "%v", err)
			for _, t := range text {
				Expect(err.Error()).To(ContainSubstring(t))
			}
		},
		Entry("a missing directory", func(dir string) string { return filepath.Join(dir, "nope") },
			"nope: not a directory of .npy files"),
		Entry("no file for any parameter", func(dir string) string { save(dir, "other.npy", ramp(1)); return dir },
			"no .npy file for any parameter", "SCENARIO/FUNCTION/bN/inputs/PARAM.npy, then"),
		Entry("float64 data", func(dir string) string {
			save(dir, "x.npy", tensor.NewFloat64(2, 4))
			return dir
		}, "x.npy: parameter x of lin is float32, the file holds float64; convert it with np.save(path, a.astype(np.float32))"),
		Entry("the wrong rank", func(dir string) string { save(dir, "x.npy", ramp(8)); return dir },
			"x.npy: parameter x of lin is declared [B][4]float32 (rank 2), the file has shape (8,) (rank 1)"),
		Entry("a fixed dimension that disagrees", func(dir string) string { save(dir, "x.npy", ramp(2, 5)); return dir },
			"x.npy: parameter x of lin is declared [B][4]float32, the file has shape (2, 5): dimension 1 is 5, not 4"),
		Entry("a batch that disagrees with the dump directory", func(dir string) string {
			save(dir, "tiny/lin/b3/inputs/x.npy", ramp(4, 4))
			return dir
		}, "dimension 0 (B) is 4, but the directory b3 has B = 3"),
		Entry("an empty batch", func(dir string) string { save(dir, "x.npy", ramp(0, 4)); return dir },
			"the batch dimension B is 0; a batch needs at least one row"),
		Entry("a truncated file", func(dir string) string {
			p := save(dir, "x.npy", ramp(2, 4))
			b, _ := os.ReadFile(p)
			Expect(os.WriteFile(p, b[:len(b)-3], 0o644)).To(Succeed())
			return dir
		}, "x.npy (parameter x of lin): npy: malformed file: truncated", "write it again with np.save(path, a)"),
		Entry("not a .npy file", func(dir string) string {
			Expect(os.WriteFile(filepath.Join(dir, "x.npy"), []byte("x,y\n1,2\n"), 0o644)).To(Succeed())
			return dir
		}, "x.npy (parameter x of lin): npy: malformed file: not a .npy file"),
		Entry("Fortran order", func(dir string) string {
			p := save(dir, "x.npy", ramp(1, 4))
			b, _ := os.ReadFile(p)
			b = []byte(string(b[:len(b)-16]))
			copy(b[10:], "{'descr': '<f4', 'fortran_order': True , 'shape': (1, 4), }")
			Expect(os.WriteFile(p, append(b, make([]byte, 16)...), 0o644)).To(Succeed())
			return dir
		}, "Fortran-order", "np.ascontiguousarray(a)"),
		Entry("big-endian data", func(dir string) string {
			p := save(dir, "x.npy", ramp(1, 4))
			b, _ := os.ReadFile(p)
			copy(b[10:], "{'descr': '>f4'")
			Expect(os.WriteFile(p, b, 0o644)).To(Succeed())
			return dir
		}, "big-endian data (>f4); convert it to little-endian"),
		Entry("a directory in place of a file", func(dir string) string {
			Expect(os.MkdirAll(filepath.Join(dir, "x.npy"), 0o755)).To(Succeed())
			return dir
		}, "x.npy is a directory"),
	)

	It("wants an int64 scalar file for an int64 parameter", func() {
		src := `//rx:input x normal(0, 1)
//rx:input n const(2)
package p

func f(x [B][2]float32, n int64) (y [B][2]float32) {
	y = x
	for i := range n {
		y = y + x
	}
	return
}
`
		dir := GinkgoT().TempDir()
		save(dir, "n.npy", tensor.FromFloat32([]float32{3}, 1))
		opts := onlyFallback()
		opts.Inputs = dir
		_, err := harness.Run(ctx, []*program.File{parseRx("p.rx", src)}, opts)
		Expect(err).To(MatchError(ContainSubstring("n.npy: parameter n of f is an int64 scalar, the file holds float32 (1,); save it with np.save(path, np.int64(v))")))

		save(dir, "n.npy", tensor.Scalar(3))
		save(dir, "x.npy", ramp(2, 2))
		res, err := harness.Run(ctx, []*program.File{parseRx("p.rx", src)}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.OK()).To(BeTrue())
		Expect(res.Replays[0].Files).To(HaveKey("n"))
	})

	It("uses Batches to select among the data's batches", func() {
		dir := GinkgoT().TempDir()
		save(dir, "tiny/lin/b3/inputs/x.npy", ramp(3, 4))
		save(dir, "tiny/lin/b7/inputs/x.npy", ramp(7, 4))
		opts := onlyFallback()
		opts.Inputs, opts.Batches = dir, []int{7, 9}
		res, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(caseNames(res.Cases)).To(Equal([]string{
			"tiny/lin/b7/oracle", "tiny/lin/b7/fallback",
			"tiny/sq/b7/oracle", "tiny/sq/b7/fallback", // generated: Batches replaces //rx:batches
			"tiny/sq/b9/oracle", "tiny/sq/b9/fallback",
		}))
		f := tinyFile()
		groups, err := harness.InputGroups(dir, f, f.Funcs[0], nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(groups).To(HaveLen(2))
		Expect([]int{groups[0].Batch, groups[1].Batch}).To(Equal([]int{3, 7}))
		Expect(groups[1].Files).To(Equal(map[string]string{"x": filepath.Join(dir, "tiny/lin/b7/inputs/x.npy")}))
		Expect(groups[1].Generated).To(Equal([]string{"w"}))
		Expect(harness.InputGroups(dir, f, f.Funcs[1], nil)).To(BeEmpty())

		opts.Batches = []int{2}
		_, err = harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(errors.Is(err, harness.ErrOptions)).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring("lin of tiny: the input files give batch 3, 7; Batches [2] selects none of them")))
	})
})
