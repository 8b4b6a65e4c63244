//go:build cgo

package native_test

import (
	"context"
	"fmt"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/scenarios"
	"github.com/rextio/rxeq/tensor"
)

// compileTiled builds p in forced mode with Options.TileRows = rows.
func compileTiled(p *ir.Program, rows int) *native.Program {
	GinkgoHelper()
	prog, err := native.Compile(context.Background(), p, native.Options{CacheDir: suiteCache, TileRows: rows})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(prog.Close)
	return prog
}

// sameOutputBits expects two output sets to hold the same tensors, bit for bit
// (NaNs included).
func sameOutputBits(got, want map[string]*tensor.Tensor) {
	GinkgoHelper()
	Expect(got).To(HaveLen(len(want)))
	for name, w := range want {
		g := got[name]
		Expect(g).NotTo(BeNil(), name)
		Expect(g.Shape).To(Equal(w.Shape), name)
		Expect(g.I64).To(Equal(w.I64), name)
		Expect(g.F32).To(HaveLen(len(w.F32)), name)
		for i := range w.F32 {
			if math.Float32bits(g.F32[i]) != math.Float32bits(w.F32[i]) {
				Fail(fmt.Sprintf("%s[%d]: got %v (%#08x), want %v (%#08x)", name, i,
					g.F32[i], math.Float32bits(g.F32[i]), w.F32[i], math.Float32bits(w.F32[i])))
			}
		}
	}
}

// invocations runs fn once and returns its outputs, how many passes of
// the generated body the call made (Counters.Tiles: one, or one per row
// tile), and its error. Whatever the tiling, the call is one invocation
// with one context, whose boundary validation runs once per input.
func invocations(prog *native.Program, fn string, in map[string]*tensor.Tensor) (map[string]*tensor.Tensor, int64, error) {
	GinkgoHelper()
	before := prog.Counters()
	r, err := prog.Run(context.Background(), fn, in)
	after := prog.Counters()
	Expect(after.Invocations - before.Invocations).To(Equal(int64(1)))
	Expect(after.Calls - before.Calls).To(Equal(int64(1)))
	Expect(after.BoundaryValidations - before.BoundaryValidations).To(BeNumerically("<=", int64(len(in))))
	if err == nil {
		Expect(after.BoundaryValidations - before.BoundaryValidations).To(Equal(int64(len(in))))
	}
	n := after.Tiles - before.Tiles
	if err != nil {
		return nil, n, err
	}
	return r.Outputs, n, nil
}

var _ = Describe("row tiles", Label("native"), func() {
	BeforeEach(func() {
		if err := native.Available(); err != nil {
			Skip(err.Error())
		}
	})

	reference := func() (*program.File, *ir.Program) {
		f, err := scenarios.Lookup("reference.rx")
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		return f, p
	}

	for _, fn := range []string{"score_linear", "score_mlp", "score_pipeline"} {
		It(fmt.Sprintf("runs %s's large batch in tiles of any size with the bits of one invocation", fn), func() {
			f, p := reference()
			Expect(native.RowSeparable(p, fn)).To(BeTrue())
			const batch = 4099 // not a multiple of any kernel's block of rows
			in, err := harness.GenerateInputs(f, f.Func(fn), batch, f.Seed, nil)
			Expect(err).NotTo(HaveOccurred())
			want, n, err := invocations(compileTiled(p, -1), fn, in)
			Expect(err).NotTo(HaveOccurred())
			Expect(n).To(Equal(int64(1)))
			// 64 rows; 13 and 40, which split the kernels' blocks of 8
			// and 16 rows and the Tanh kernel's blocks of 64 elements.
			for _, rows := range []int{64, 13, 40} {
				got, n, err := invocations(compileTiled(p, rows), fn, in)
				Expect(err).NotTo(HaveOccurred())
				Expect(n).To(Equal(int64((batch+rows-1)/rows)), "tiles of %d rows", rows)
				sameOutputBits(got, want)
			}
			// The default tile size tiles this batch too.
			got, n, err := invocations(compileTiled(p, 0), fn, in)
			Expect(err).NotTo(HaveOccurred())
			Expect(n).To(BeNumerically(">", 1))
			sameOutputBits(got, want)
		})
	}

	It("runs a batch that fits in one tile once, and validates each input once per call whatever the tiling", func() {
		f, p := reference()
		prog := compileTiled(p, 64)
		in, err := harness.GenerateInputs(f, f.Func("score_linear"), 64, f.Seed, nil)
		Expect(err).NotTo(HaveOccurred())
		_, n, err := invocations(prog, "score_linear", in)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(int64(1)))
		in, err = harness.GenerateInputs(f, f.Func("score_linear"), 65, f.Seed, nil)
		Expect(err).NotTo(HaveOccurred())
		before := prog.Counters()
		_, n, err = invocations(prog, "score_linear", in)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(int64(2)))
		c := prog.Counters()
		Expect(c.Calls - before.Calls).To(Equal(int64(1)))
		Expect(c.Invocations - before.Invocations).To(Equal(int64(1)))
		Expect(c.BoundaryValidations - before.BoundaryValidations).To(Equal(int64(3)))
		Expect(c.FactQueries).To(Equal(c.BoundaryValidations + c.ResultValidations))
		Expect(c.FactRequeries).To(BeZero())
		Expect(c.ArenaReleases).To(Equal(c.ArenaAllocs))
		// A batch of many tiles: still one validation per input.
		in, err = harness.GenerateInputs(f, f.Func("score_linear"), 64*50+1, f.Seed, nil)
		Expect(err).NotTo(HaveOccurred())
		before = prog.Counters()
		_, n, err = invocations(prog, "score_linear", in)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(int64(51)))
		c = prog.Counters()
		Expect(c.BoundaryValidations - before.BoundaryValidations).To(Equal(int64(3)))
		// Each tile's op results are new values, validated each.
		Expect(c.ResultValidations - before.ResultValidations).To(Equal(int64(51 * 17)))
		Expect(c.ArenaReleases).To(Equal(c.ArenaAllocs))
	})

	It("fails a large batch with invalid inputs exactly as one invocation does, before any tile", func() {
		f, p := reference()
		in, err := harness.GenerateInputs(f, f.Func("score_linear"), 1000, f.Seed, nil)
		Expect(err).NotTo(HaveOccurred())
		bad := map[string]*tensor.Tensor{"x": in["x"], "w": tensor.NewFloat32(31, 8), "b": in["b"]}
		_, _, want := invocations(compileTiled(p, -1), "score_linear", bad)
		Expect(want).To(HaveOccurred())
		_, n, got := invocations(compileTiled(p, 64), "score_linear", bad)
		Expect(got).To(MatchError(want.Error()))
		Expect(n).To(BeZero()) // the body never ran
		// A malformed input: a shape that does not hold its data.
		short := &tensor.Tensor{DType: tensor.Float32, Shape: []int{1000, 32}, F32: in["x"].F32[:1000*32-1]}
		bad = map[string]*tensor.Tensor{"x": short, "w": in["w"], "b": in["b"]}
		_, _, want = invocations(compileTiled(p, -1), "score_linear", bad)
		Expect(want).To(HaveOccurred())
		_, n, got = invocations(compileTiled(p, 64), "score_linear", bad)
		Expect(got).To(MatchError(want.Error()))
		Expect(n).To(BeZero())
	})

	It("stops at the first tile when a checked op fails, with the untiled error", func() {
		_, p := parse("tile_err.rx", `package t

func f(x [B][4]float32, d int64) (y [B][4]float32) {
	y = x
	for i := range 3 {
		if CheckedRem(i, d) == 0 {
			y = Tanh(y)
		}
	}
	return
}
`)
		Expect(native.RowSeparable(p, "f")).To(BeTrue())
		in := map[string]*tensor.Tensor{"x": tensor.NewFloat32(500, 4), "d": tensor.Scalar(0)}
		_, _, want := invocations(compileTiled(p, -1), "f", in)
		Expect(want).To(MatchError(ContainSubstring("CheckedRem: division by zero")))
		_, n, got := invocations(compileTiled(p, 64), "f", in)
		Expect(got).To(MatchError(want.Error()))
		Expect(n).To(Equal(int64(1)))
	})

	It("starts each tile's body afresh: locals, loops and results as in one pass", func() {
		_, p := parse("tile_reassign.rx", `package t

func f(x [B][4]float32, w [4]float32, n int64) (y [B][4]float32, z [B][4]float32) {
	v := w
	u := x
	for i := range n {
		v = v * 2
		u = u + v
	}
	y = u
	z = Tanh(y)
	for i := range n {
		z = z + y
	}
	return
}
`)
		Expect(native.RowSeparable(p, "f")).To(BeTrue())
		in := map[string]*tensor.Tensor{
			"x": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, 5, 300, 4),
			"w": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, 6, 4),
			"n": tensor.Scalar(3),
		}
		want, n, err := invocations(compileTiled(p, -1), "f", in)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(int64(1)))
		got, n, err := invocations(compileTiled(p, 64), "f", in)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(int64(5)))
		sameOutputBits(got, want)
	})

	It("does not tile a call whose output shares memory with an input", func() {
		_, p := parse("tile_alias.rx", `package t

func f(x [B][4]float32) (y [B][4]float32) {
	y = Tanh(x) * 2
	return
}
`)
		Expect(native.RowSeparable(p, "f")).To(BeTrue())
		data := tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, 7, 300, 4)
		call := func(rows int) ([]float32, int64) {
			x := tensor.FromFloat32(append([]float32(nil), data.F32...), 300, 4)
			prog := compileTiled(p, rows)
			before := prog.Counters().Tiles
			_, err := prog.RunInto(context.Background(), "f", map[string]*tensor.Tensor{"x": x}, map[string]*tensor.Tensor{"y": x})
			Expect(err).NotTo(HaveOccurred())
			return x.F32, prog.Counters().Tiles - before
		}
		want, _ := call(-1)
		got, n := call(64)
		Expect(n).To(Equal(int64(1)))
		Expect(got).To(Equal(want))
	})

	It("gives generated programs the same outputs and errors in tiles as in one invocation", func() {
		tiled, total := 0, 0
		// Half of the programs leave out what makes a function mix its
		// rows or return a scalar, so that more of them are tiled.
		rowwise := fuzz.Config{Exclude: fuzz.FeatReduce | fuzz.FeatKeepDims | fuzz.FeatTranspose | fuzz.FeatIntLocals |
			fuzz.FeatClassSteer | fuzz.FeatSoftmax | fuzz.FeatLogSoftmax | fuzz.FeatArgmax}
		for seed := uint64(1); seed <= 40; seed++ {
			cfg := fuzz.Config{}
			if seed%2 == 0 {
				cfg = rowwise
			}
			g := fuzz.Generate(seed, cfg)
			f, err := program.Parse(fmt.Sprintf("gen%d.rx", seed), g.Source)
			Expect(err).NotTo(HaveOccurred())
			p, err := program.Lower(f)
			Expect(err).NotTo(HaveOccurred())
			one, tiles := compileTiled(p, -1), compileTiled(p, 7)
			for _, pf := range f.Funcs {
				total++
				if native.RowSeparable(p, pf.Name) {
					tiled++
				}
				in, err := harness.GenerateInputs(f, pf, 100, f.Seed, nil)
				Expect(err).NotTo(HaveOccurred())
				want, _, werr := invocations(one, pf.Name, in)
				got, _, gerr := invocations(tiles, pf.Name, in)
				if werr != nil {
					Expect(gerr).To(MatchError(werr.Error()), "seed %d, %s", seed, pf.Name)
					continue
				}
				Expect(gerr).NotTo(HaveOccurred(), "seed %d, %s", seed, pf.Name)
				By(fmt.Sprintf("comparing seed %d, %s", seed, pf.Name))
				sameOutputBits(got, want)
			}
		}
		// Some of them are row-separable, so the tiles were exercised.
		Expect(tiled).To(BeNumerically(">", total/10), "%d of %d functions row-separable", tiled, total)
	})

	It("does not tile a call whose outputs share memory with each other", func() {
		_, p := parse("tile_alias2.rx", `package t

func f(x [B][4]float32) (y1 [B][4]float32, y2 [B][4]float32) {
	y1 = x * 2
	y2 = x * 3
	return
}
`)
		x := tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, 9, 100, 4)
		call := func(rows int) ([]float32, int64) {
			// y2 starts one element after y1: their rows do not line up.
			buf := make([]float32, 404)
			y1, y2 := tensor.FromFloat32(buf[:400], 100, 4), tensor.FromFloat32(buf[4:404], 100, 4)
			prog := compileTiled(p, rows)
			before := prog.Counters().Tiles
			_, err := prog.RunInto(context.Background(), "f", map[string]*tensor.Tensor{"x": x}, map[string]*tensor.Tensor{"y1": y1, "y2": y2})
			Expect(err).NotTo(HaveOccurred())
			return buf, prog.Counters().Tiles - before
		}
		want, _ := call(-1)
		got, n := call(7)
		Expect(n).To(Equal(int64(1)))
		Expect(got).To(Equal(want))
	})

	It("chooses tiles from the bytes per row, large enough for the work every tile repeats", func() {
		_, p := reference()
		// docs/native.md quotes these.
		Expect(native.DefaultTileRows(p, "score_linear", 65536, nil)).To(Equal(1408))
		Expect(native.DefaultTileRows(p, "score_mlp", 65536, nil)).To(Equal(448))
		Expect(native.DefaultTileRows(p, "score_pipeline", 65536, nil)).To(Equal(384))
		Expect(native.DefaultTileRows(p, "score_mlp", 448, nil)).To(BeZero()) // one tile
		Expect(native.DefaultTileRows(p, "score_mlp", 64, nil)).To(BeZero())
		_, p = parse("tile_work.rx", `package t

func light(x [B][64]float32, w [64][64]float32) (y [B][64]float32) {
	y = MatMul(x, w)
	return
}

func heavy(x [B][64]float32, w [64][64]float32) (y [B][64]float32) {
	y = MatMul(x, MatMul(MatMul(w, w), w))
	return
}

func heaviest(x [B][1]float32, w [512][512]float32) (y [B][512]float32) {
	y = x * Sum(MatMul(w, w), 0)
	return
}

func symbolic(x [B][N]float32, w [N][C]float32) (y [B][C]float32) {
	y = Tanh(MatMul(x, w))
	return
}
`)
		light := native.DefaultTileRows(p, "light", 65536, nil)
		Expect(light).To(BeNumerically(">=", 64))
		Expect(light).To(BeNumerically("<", 2048))
		// Two 64³ MatMuls per tile against 64² per row: tiles of at least
		// 16 × 128 rows.
		Expect(native.DefaultTileRows(p, "heavy", 65536, nil)).To(Equal(2048))
		Expect(native.DefaultTileRows(p, "heaviest", 65536, nil)).To(BeZero())
		// x, MatMul, Tanh and y: 128 + 3 × 32 bytes a row; 512 KiB / 224
		// = 2340, down to a multiple of 64.
		Expect(native.DefaultTileRows(p, "symbolic", 65536, map[string]int{"N": 32, "C": 8})).To(Equal(2304))
		Expect(native.DefaultTileRows(p, "symbolic", 65536, map[string]int{"N": 1024, "C": 1024})).To(Equal(64))
	})

	DescribeTable("tiles only functions whose rows are independent",
		func(src string, separable bool) {
			_, p := parse("sep.rx", "package t\n\n"+src)
			Expect(native.RowSeparable(p, "f")).To(Equal(separable))
			if separable {
				return
			}
			// Not separable: one invocation, whatever the batch.
			prog := compileTiled(p, 8)
			in := map[string]*tensor.Tensor{}
			for _, v := range p.Func("f").Params {
				shape := make([]int, v.Type.Rank())
				for i, d := range v.Type.Shape {
					shape[i] = int(d.Size)
					if d.IsSym() {
						shape[i] = 100
					}
				}
				in[v.Name] = tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, 3, shape...)
			}
			_, n, err := invocations(prog, "f", in)
			Expect(err).NotTo(HaveOccurred())
			Expect(n).To(Equal(int64(1)))
		},
		Entry("elementwise with a broadcast row", "func f(x [B][4]float32, b [4]float32, c [1][4]float32) (y [B][4]float32) {\n\ty = (x + b) * c\n\treturn\n}\n", true),
		Entry("MatMul with rows on the left", "func f(x [B][4]float32, w [4][3]float32) (y [B][3]float32) {\n\ty = MatMul(x, w)\n\treturn\n}\n", true),
		Entry("Softmax and Argmax along the row", "func f(x [B][4]float32) (p [B][4]float32, c [B]int64) {\n\tp = Softmax(x, 1)\n\tc = Argmax(p, 1)\n\treturn\n}\n", true),
		Entry("a sum over the batch", "func f(x [B][4]float32) (y [B][4]float32) {\n\ty = x - Sum(x, 0, true)\n\treturn\n}\n", false),
		Entry("Softmax over the batch", "func f(x [B][4]float32) (y [B][4]float32) {\n\ty = Softmax(x, 0)\n\treturn\n}\n", false),
		Entry("the batch as MatMul's inner dim", "func f(x [B][4]float32) (y [B][4]float32) {\n\ty = MatMul(x, MatMul(Transpose(x), x))\n\treturn\n}\n", false),
		Entry("a transposed batch", "func f(x [B][4]float32) (y [B][4]float32) {\n\ty = Transpose(Transpose(x))\n\treturn\n}\n", false),
		Entry("an operand whose leading size the checker binds to the batch", "func f(x [B][4]float32, z [N][4]float32) (y [B][4]float32) {\n\ty = x + z\n\treturn\n}\n", true),
		Entry("a broadcast that moves the batch off dim 0", "func f(x [B][4]float32, z [2][1][4]float32) (y [2][B][4]float32) {\n\ty = x + z\n\treturn\n}\n", false),
		Entry("a result without the batch", "func f(x [B][4]float32) (y [B][4]float32, s float32) {\n\ty = x\n\ts = 1\n\treturn\n}\n", false),
	)
})
