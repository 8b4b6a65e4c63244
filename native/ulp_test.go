//go:build cgo

package native_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/native"
	nrt "github.com/rextio/rxeq/native/runtime"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

// ulpOp is one elementwise op of the sweep and its float64 reference.
type ulpOp struct {
	name  string
	kind  ir.OpKind
	unary func(x float64) float64
	bin   func(x, y float64) float64
}

var ulpOps = []ulpOp{
	{name: "tanh", kind: ir.Tanh, unary: math.Tanh},
	{name: "exp", kind: ir.Exp, unary: math.Exp},
	{name: "log", kind: ir.Log, unary: math.Log},
	{name: "sigmoid", kind: ir.Sigmoid, unary: func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }},
	{name: "sqrt", kind: ir.Sqrt, unary: math.Sqrt},
	{name: "relu", kind: ir.Relu, unary: func(x float64) float64 {
		if x > 0 || x != x {
			return x
		}
		return 0
	}},
	{name: "abs", kind: ir.Abs, unary: math.Abs},
	{name: "neg", kind: ir.Neg, unary: func(x float64) float64 { return -x }},
	{name: "add", kind: ir.Add, bin: func(x, y float64) float64 { return x + y }},
	{name: "sub", kind: ir.Sub, bin: func(x, y float64) float64 { return x - y }},
	{name: "mul", kind: ir.Mul, bin: func(x, y float64) float64 { return x * y }},
	{name: "div", kind: ir.Div, bin: func(x, y float64) float64 { return x / y }},
	{name: "maximum", kind: ir.Maximum, bin: math.Max},
	{name: "minimum", kind: ir.Minimum, bin: math.Min},
}

// ulpInputs is the sweep's dense set of float32 inputs: every 1021st bit
// pattern (both signs, so subnormals, normals, ±Inf and NaNs at the ends
// of the range are sampled throughout) plus the edges: ±0, the smallest
// and largest subnormals and normals, ±MaxFloat32, ±Inf, NaN, and values
// around where exp overflows and underflows, tanh saturates, and log and
// sigmoid change regime.
func ulpInputs() []float32 {
	var xs []float32
	for u := uint64(0); u < 1<<32; u += 1021 {
		xs = append(xs, math.Float32frombits(uint32(u)))
	}
	edges := []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.Float32frombits(0x007fffff),
		math.Float32frombits(0x00800000), math.MaxFloat32, float32(math.Inf(1)), float32(math.NaN()),
		88.72283, 88.72284, 88.7229, 89, -87.33655, -103.27893, -103.97208, -104, 9.010913, 9.0109135, 1, 0.5, 2,
		1e-7, 1e-30, 1e30, 0.625, 15.942385, 16.635532, -16.635532, 1 + 1.0/(1<<23), 1 - 1.0/(1<<24)}
	for _, e := range edges {
		xs = append(xs, e, -e, math.Nextafter32(e, float32(math.Inf(1))), math.Nextafter32(e, float32(math.Inf(-1))))
	}
	return xs
}

// ulpErr is the error of got against the float64 reference want, in
// float32 ULPs of want (the spacing of float32 numbers at |want|; a
// subnormal's is 2^-149). NaN must be NaN; a reference that rounds to ±Inf
// (or is one) must be that Inf; anything else that is not finite is an
// infinite error.
func ulpErr(got float32, want float64) float64 {
	g := float64(got)
	switch {
	case math.IsNaN(want) || math.IsNaN(g):
		if math.IsNaN(want) && math.IsNaN(g) {
			return 0
		}
		return math.Inf(1)
	case math.IsInf(float64(float32(want)), 0) || math.IsInf(g, 0):
		if float32(want) == got {
			return 0
		}
		return math.Inf(1)
	}
	if g == want {
		return 0
	}
	a := math.Abs(want)
	ulp := math.Ldexp(1, -149)
	if a >= 0x1p-126 {
		_, e := math.Frexp(a) // a = f * 2^e, f in [0.5, 1)
		ulp = math.Ldexp(1, e-24)
	}
	return math.Abs(g-want) / ulp
}

// ulpStats is one executor's result on one op.
type ulpStats struct {
	max      float64 // the greatest error in ULPs
	worst    int     // where
	misround int     // results other than float32(reference)
}

func ulpMeasure(op ulpOp, xs, ys, got []float32) ulpStats {
	st := ulpStats{worst: -1}
	for i, g := range got {
		var want float64
		if op.unary != nil {
			want = op.unary(float64(xs[i]))
		} else {
			want = op.bin(float64(xs[i]), float64(ys[i]))
		}
		e := ulpErr(g, want)
		if e > st.max || st.worst < 0 {
			st.max, st.worst = e, i
		}
		if w := float32(want); math.Float32bits(w) != math.Float32bits(g) && !(w != w && g != g) {
			st.misround++
		}
	}
	return st
}

// ulpProgram is one function per op: y = op(x) or y = op(x, z), over [N].
func ulpProgram() *ir.Program {
	p := &ir.Program{File: "ulp.rx"}
	for _, op := range ulpOps {
		b := irtest.NewFunc("f_" + op.name)
		x := b.Param("x", ir.Float32, "N")
		var args []*ir.Value
		args = append(args, x)
		if op.bin != nil {
			args = append(args, b.Param("z", ir.Float32, "N"))
		}
		y := b.Result("y", ir.Float32, "N")
		b.Op(op.kind, y, args...)
		p.Funcs = append(p.Funcs, b.Fn)
	}
	return p
}

// TestULPSweep measures the greatest error in float32 ULPs of every
// elementwise op against Go's float64 math, for native code on every ISA
// this CPU runs (capped with native.Options.ISA) and for the fallback, prints
// the table (go test -v -run ULPSweep ./native/), and requires native to be
// no worse than the fallback on any op (up to 2^-20 ULP of slack: both
// round a float64 value once, and their float64 values differ in the last
// bits) and to round to the same float32 as the fallback's method nearly
// always.
func TestULPSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("the sweep compiles the runtime once per ISA")
	}
	xs := ulpInputs()
	ys := make([]float32, len(xs))
	for i := range ys {
		ys[i] = xs[(i*7919+13)%len(xs)] // a fixed permutation: every pair kind occurs
	}
	in := func(op ulpOp) map[string]*tensor.Tensor {
		m := map[string]*tensor.Tensor{"x": tensor.FromFloat32(xs, len(xs))}
		if op.bin != nil {
			m["z"] = tensor.FromFloat32(ys, len(ys))
		}
		return m
	}
	p := ulpProgram()
	ctx := context.Background()
	fb := map[string]ulpStats{}
	for i, op := range ulpOps {
		it, err := fallback.New(p.Funcs[i])
		if err != nil {
			t.Fatal(err)
		}
		out, err := it.Run(ctx, in(op))
		if err != nil {
			t.Fatal(err)
		}
		fb[op.name] = ulpMeasure(op, xs, ys, out["y"].F32)
	}
	best, err := nrt.DetectISA("")
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "c")
	var table strings.Builder
	fmt.Fprintf(&table, "%d inputs per op\n%-8s %-8s %14s %14s %10s %10s\n", len(xs), "op", "isa", "native maxULP", "fallback maxULP", "native≠f32", "fallbk≠f32")
	for _, isa := range nrt.ISAs {
		prog, err := native.Compile(ctx, p, native.Options{CacheDir: cache, ISA: isa})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ulpOps {
			r, err := prog.Run(ctx, "f_"+op.name, in(op))
			if err != nil {
				t.Fatal(err)
			}
			n, f := ulpMeasure(op, xs, ys, r.Outputs["y"].F32), fb[op.name]
			fmt.Fprintf(&table, "%-8s %-8s %14.6f %14.6f %10d %10d\n", op.name, isa, n.max, f.max, n.misround, f.misround)
			if n.max > f.max+0x1p-20 {
				i := n.worst
				t.Errorf("%s on %s: native is %.6f ULP off (x=%g z=%g got %g), the fallback at most %.6f", op.name, isa, n.max, xs[i], ys[i], r.Outputs["y"].F32[i], f.max)
			}
			if n.misround > f.misround+len(xs)/100000 {
				t.Errorf("%s on %s: %d results differ from float32(float64 reference), the fallback's %d", op.name, isa, n.misround, f.misround)
			}
		}
		prog.Close()
		if isa == best {
			break
		}
	}
	t.Logf("ULP sweep (native ISA up to %s):\n%s", best, table.String())
}

// TestULPExhaustive runs Tanh, Exp, Sigmoid and Log on all 2^32 float32
// inputs on every ISA this CPU runs and requires each ISA's results to be
// bit for bit those of the SSE2 kernels (SLEEF's float64 functions rounded
// once; a NaN matches any NaN), so that the AVX-512 short paths and their
// rounding test (see rx_kernels.c) never change a result. Opt-in
// (RXEQ_ULP_EXHAUSTIVE=1): it evaluates each op 2^32 times per ISA, about 8
// minutes on two cores (run it with -timeout 30m).
func TestULPExhaustive(t *testing.T) {
	if os.Getenv("RXEQ_ULP_EXHAUSTIVE") != "1" {
		t.Skip("set RXEQ_ULP_EXHAUSTIVE=1 to sweep all 2^32 inputs")
	}
	best, err := nrt.DetectISA("")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "c")
	p := ulpProgram()
	ops := []string{"f_tanh", "f_exp", "f_sigmoid", "f_log"}
	var progs []*native.Program
	var names []string
	for _, isa := range nrt.ISAs[1:] {
		prog, err := native.Compile(ctx, p, native.Options{CacheDir: cache, ISA: isa})
		if err != nil {
			t.Fatal(err)
		}
		defer prog.Close()
		progs, names = append(progs, prog), append(names, isa)
		if isa == best {
			break
		}
	}
	const chunk = 1 << 22
	xs := make([]float32, chunk)
	x := tensor.FromFloat32(xs, chunk)
	outs := make([]*tensor.Tensor, len(progs))
	for i := range outs {
		outs[i] = tensor.FromFloat32(make([]float32, chunk), chunk)
	}
	for _, fn := range ops {
		diffs := make([]int, len(progs))
		for base := uint64(0); base < 1<<32; base += chunk {
			for i := range xs {
				xs[i] = math.Float32frombits(uint32(base + uint64(i)))
			}
			for i, prog := range progs {
				if _, err := prog.RunInto(ctx, fn, map[string]*tensor.Tensor{"x": x}, map[string]*tensor.Tensor{"y": outs[i]}); err != nil {
					t.Fatal(err)
				}
			}
			want := outs[0].F32
			for i := 1; i < len(progs); i++ {
				for k, g := range outs[i].F32 {
					if math.Float32bits(g) != math.Float32bits(want[k]) && (g == g || want[k] == want[k]) {
						if diffs[i] < 5 {
							t.Errorf("%s on %s: x=%g (%#08x) got %g (%#08x), sse2 %g (%#08x)", fn, names[i], xs[k], math.Float32bits(xs[k]), g, math.Float32bits(g), want[k], math.Float32bits(want[k]))
						}
						diffs[i]++
					}
				}
			}
		}
		for i := 1; i < len(progs); i++ {
			t.Logf("%s on %s: %d of 2^32 results differ from sse2", fn, names[i], diffs[i])
		}
	}
}
