//go:build cgo

package native_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/native"
	nrt "github.com/rextio/rxeq/native/runtime"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/scenarios"
	"github.com/rextio/rxeq/tensor"
)

// zivDriver includes rx_kernels.c with RX_ZIV_COUNT counting the lanes that
// the AVX-512 short paths send to SLEEF, runs each op's AVX-512 and SSE2
// kernels over the float32s of a file (argv[2]: raw little-endian) and
// prints the number of inputs, of fallback lanes and of results that differ
// in any bit from the SSE2 kernel's (SLEEF's float64 function rounded once),
// and the number that differ when the AVX-512 kernel runs in place (o == x,
// as the fused MatMul's Tanh does).
const zivDriver = `
#include <stdio.h>
#include <stdlib.h>
static long long rx_hard[3];
#define RX_ZIV_COUNT(op, lanes) (rx_hard[op] += __builtin_popcount(lanes))
#include "rx_kernels.c"

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	FILE *f = fopen(argv[2], "rb");
	if (!f)
		return 2;
	fseek(f, 0, SEEK_END);
	long n = ftell(f) / 4;
	fseek(f, 0, SEEK_SET);
	float *x = malloc(n * 4 + 4), *a = malloc(n * 4 + 4), *b = malloc(n * 4 + 4), *c = malloc(n * 4 + 4);
	if (fread(x, 4, n, f) != (size_t)n)
		return 2;
	int op = atoi(argv[1]);
	rx_map_fn fast[3] = {rx_tanh_avx512, rx_exp_avx512, rx_sigmoid_avx512};
	rx_map_fn ref[3] = {rx_tanh_sse2, rx_exp_sse2, rx_sigmoid_sse2};
	fast[op](a, x, n);
	ref[op](b, x, n);
	long long hard = rx_hard[op];
	memcpy(c, x, n * 4);
	fast[op](c, c, n);
	long diff = 0, diffin = 0;
	for (long i = 0; i < n; i++) {
		diff += memcmp(a + i, b + i, 4) != 0;
		diffin += memcmp(c + i, b + i, 4) != 0;
	}
	printf("%ld %lld %ld %ld\n", n, hard, diff, diffin);
	return 0;
}
`

// zivCase is one input set of TestZivFallbacks and the greatest fraction of
// its lanes that may go to SLEEF.
type zivCase struct {
	name string
	op   int // 0 Tanh, 1 Exp, 2 Sigmoid (the driver's numbering)
	xs   []float32
	max  float64
}

// zivSweep is every step-th float32 with lo <= |x| <= hi, both signs.
func zivSweep(lo, hi float32, step uint32) []float32 {
	var xs []float32
	for u := math.Float32bits(lo); u <= math.Float32bits(hi); u += step {
		x := math.Float32frombits(u)
		xs = append(xs, x, -x)
	}
	return xs
}

// scoringTanhInputs are the arguments of every Tanh in score_mlp and
// score_pipeline of the reference scenario at a batch size, as the
// scoring benchmarks feed them: the layers computed in float32 in the
// kernels' order (MatMul: each product rounded, added in k order), Tanh
// correctly rounded as the kernels are.
func scoringTanhInputs(t *testing.T, batch int) (mlp, pipeline []float32) {
	f, err := scenarios.Lookup("reference.rx")
	if err != nil {
		t.Fatal(err)
	}
	tanh := func(x float32) float32 { return float32(math.Tanh(float64(x))) }
	hidden := func(x []float32, w1, b1 *tensor.Tensor) []float32 {
		H, F := w1.Shape[0], w1.Shape[1]
		h := make([]float32, batch*H)
		for i := range batch {
			for j := range H {
				var s float32
				for k := range F {
					s += float32(x[i*F+k] * w1.F32[j*F+k])
				}
				h[i*H+j] = s + b1.F32[j]
			}
		}
		return h
	}
	in, err := harness.GenerateInputs(f, f.Func("score_mlp"), batch, f.Seed, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := hidden(in["x"].F32, in["w1"], in["b1"])
	mlp = append(mlp, h...)
	for i := range h {
		h[i] = tanh(h[i])
	}
	for round := range 4 {
		for i := range h {
			if round%2 == 0 {
				h[i] *= 0.75
			} else {
				mlp = append(mlp, h[i])
				h[i] = tanh(h[i])
			}
		}
	}
	in, err = harness.GenerateInputs(f, f.Func("score_pipeline"), batch, f.Seed, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := in["x"].F32
	mean, scale := in["mean"].F32, in["scale"].F32
	xn := make([]float32, len(x))
	for i := range x {
		xn[i] = (x[i] - mean[i%len(mean)]) / scale[i%len(scale)]
	}
	h = hidden(xn, in["w1"], in["b1"])
	phase := int(in["phase"].I64[0])
	for round := range 4 {
		for i := range h {
			if (round+phase)%2 == 0 {
				h[i] = max(h[i], 0)
			} else {
				pipeline = append(pipeline, h[i])
				h[i] = tanh(h[i])
			}
		}
	}
	return mlp, pipeline
}

// TestZivFallbacks pins the AVX-512 short paths of Tanh, Exp and Sigmoid
// (rx_kernels.c): on dense sweeps of their ranges and on the arguments the
// scoring benchmarks give Tanh, their results are bit for bit the SSE2
// kernels' (SLEEF's), also in place, and only a small fraction of lanes is
// recomputed by SLEEF: a short path that sent every lane to SLEEF would be
// as exact and several times slower, which no other test sees; nor would
// Tanh taking its widest piece for every block, which the sweeps within
// |x| <= 1 and 6 catch by their narrower bands. The fractions are
// printed with -v.
func TestZivFallbacks(t *testing.T) {
	if isa, err := nrt.DetectISA(""); err != nil || isa != "avx512" {
		t.Skipf("the short paths are AVX-512 only (ISA %q, %v)", isa, err)
	}
	cc := strings.Fields(os.Getenv("CC"))
	if len(cc) == 0 {
		cc = []string{"cc"}
	}
	if _, err := exec.LookPath(cc[0]); err != nil {
		t.Skip("no C compiler: " + err.Error())
	}
	dir := t.TempDir()
	lib := nrt.NativeFor("avx512")
	for _, f := range lib.Files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), []byte(f.Text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "driver.c"), []byte(zivDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(cc[1:], "-std=gnu11", "-O2", "-ffp-contract=off", "-Wall", "-Werror")
	args = append(args, lib.Args...)
	args = append(args, "-I", dir, filepath.Join(dir, "driver.c"), filepath.Join(dir, "rx_context.c"), "-o", filepath.Join(dir, "driver"))
	args = append(append(args, lib.Libs...), "-lm")
	if out, err := exec.Command(cc[0], args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc[0], strings.Join(args, " "), err, out)
	}

	mlp, pipeline := scoringTanhInputs(t, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	normal := make([]float32, 1<<20)
	for i := range normal {
		normal[i] = float32(rng.NormFloat64() * 2)
	}
	// Small values (pieces 1 and 2) with a NaN or an infinity here and
	// there: the block goes to piece 3, which sends its NaNs to SLEEF.
	mixed := make([]float32, 1<<16)
	for i := range mixed {
		mixed[i] = float32(rng.NormFloat64() * 0.5)
		switch i % 97 {
		case 0:
			mixed[i] = math.Float32frombits(0x7fc00000 | uint32(i)) // quiet NaN, a payload
		case 50:
			mixed[i] = math.Float32frombits(0xff800001 + uint32(i)) // signalling NaN
		case 70:
			mixed[i] = float32(math.Inf(1 - 2*(i%2)))
		}
	}
	cases := []zivCase{
		// Tanh's widest band (|x| > 6) is 2^19 float64 ULPs: 2*2^19/2^29
		// = 0.2% of uniformly placed results; Exp's and Sigmoid's 2^13:
		// 0.003%.
		{"tanh sweep", 0, zivSweep(0x1p-12, 9.1, 97), 0.005},
		// Blocks within |x| <= 1 and 6 take the narrower pieces, with
		// bands of 2^12 and 2^16 ULPs (0.0015% and 0.024%): the widest
		// piece would send more than these bounds.
		{"tanh sweep |x| <= 1", 0, zivSweep(0x1p-12, 1, 31), 0.0001},
		{"tanh sweep 1 < |x| <= 6", 0, zivSweep(1, 6, 7), 0.001},
		{"tanh normal(0, 2)", 0, normal, 0.005},
		{"tanh normal(0, 0.5), NaN, Inf", 0, mixed, 0.05},
		{"tanh score_mlp B=4096", 0, mlp, 0.005},
		{"tanh score_pipeline B=4096", 0, pipeline, 0.005},
		{"exp sweep", 1, zivSweep(0x1p-20, 87, 97), 0.0005},
		{"sigmoid sweep", 2, zivSweep(0x1p-20, 86, 97), 0.0005},
	}
	for _, c := range cases {
		in := filepath.Join(dir, "in.f32")
		buf := make([]byte, 4*len(c.xs))
		for i, x := range c.xs {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
		}
		if err := os.WriteFile(in, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(filepath.Join(dir, "driver"), fmt.Sprint(c.op), in).Output()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var n, hard, diff, diffIn int
		if _, err := fmt.Sscan(string(out), &n, &hard, &diff, &diffIn); err != nil || n != len(c.xs) {
			t.Fatalf("%s: driver printed %q (%v)", c.name, out, err)
		}
		frac := float64(hard) / float64(n)
		t.Logf("%-28s %8d lanes, %6d to SLEEF (%.4f%%)", c.name, n, hard, 100*frac)
		if diff != 0 {
			t.Errorf("%s: %d results differ from the SSE2 kernel's", c.name, diff)
		}
		if diffIn != 0 {
			t.Errorf("%s: in place, %d results differ from the SSE2 kernel's", c.name, diffIn)
		}
		if frac > c.max {
			t.Errorf("%s: %d of %d lanes (%.4f%%) went to SLEEF, want at most %.4f%%", c.name, hard, n, 100*frac, 100*c.max)
		}
	}
}

// BenchmarkTanh is the Tanh kernel alone: y = Tanh(x) over n float32s
// drawn from normal(0, 1.5) (like the scoring benchmarks' hidden layers),
// through RunInto, in ns per element (wall and CPU time).
func BenchmarkTanh(b *testing.B) {
	fb := irtest.NewFunc("f")
	x := fb.Param("x", ir.Float32, "N")
	y := fb.Result("y", ir.Float32, "N")
	fb.Op(ir.Tanh, y, x)
	ctx := context.Background()
	prog, err := native.Compile(ctx, &ir.Program{File: "tanh.rx", Funcs: []*ir.Func{fb.Fn}}, native.Options{CacheDir: filepath.Join(b.TempDir(), "c")})
	if err != nil {
		b.Fatal(err)
	}
	defer prog.Close()
	for _, n := range []int{4096, 65536} {
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		xs := make([]float32, n)
		for i := range xs {
			xs[i] = float32(rng.NormFloat64() * 1.5)
		}
		in := map[string]*tensor.Tensor{"x": tensor.FromFloat32(xs, n)}
		out := map[string]*tensor.Tensor{"y": tensor.NewFloat32(n)}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := prog.RunInto(ctx, "f", in, out); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/elem")
		})
	}
}
