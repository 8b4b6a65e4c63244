//go:build cgo

package native_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/scenarios"
	"github.com/rextio/rxeq/tensor"
)

// benchBatches are the batch sizes of the scoring benchmarks; the PyTorch
// anchor (scripts/bench_torch.py) uses the same ones.
var benchBatches = []int{1, 16, 128, 4096, 65536}

func benchProgram(b *testing.B) (*program.File, *ir.Program) {
	return benchFile(b, "score_linear.rx")
}

// benchFile parses, checks and lowers testdata/NAME.
func benchFile(b *testing.B, name string) (*program.File, *ir.Program) {
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		b.Fatal(err)
	}
	f, err := program.Parse(name, src)
	if err != nil {
		b.Fatal(err)
	}
	p, err := program.Lower(f)
	if err != nil {
		b.Fatal(err)
	}
	return f, p
}

// benchInputs are score_linear's inputs (testdata/score_linear.rx) at a
// batch size.
func benchInputs(f *program.File, batch int) map[string]*tensor.Tensor {
	in := map[string]*tensor.Tensor{}
	for name, shape := range map[string][]int{"x": {batch, 32}, "w": {32, 8}, "b": {8}} {
		d, _ := f.Input(name)
		in[name] = tensor.Generate(d, tensor.DeriveSeed(1, name), shape...)
	}
	return in
}

// benchReference returns the catalog's reference scenario and its IR.
func benchReference(b *testing.B) (*program.File, *ir.Program) {
	f, err := scenarios.Lookup("reference.rx")
	if err != nil {
		b.Fatal(err)
	}
	p, err := program.Lower(f)
	if err != nil {
		b.Fatal(err)
	}
	return f, p
}

// benchScoring runs function fn of the reference scenario on the given
// executors at every batch size, in ns/row (and allocs/op).
func benchScoring(b *testing.B, fn string, executors ...string) {
	benchScoringWith(b, fn, native.Options{}, benchBatches, executors...)
}

// benchScoringWith is benchScoring with the native program compiled with
// opts (its cache directory aside), at the given batch sizes.
func benchScoringWith(b *testing.B, fn string, opts native.Options, batches []int, executors ...string) {
	f, p := benchReference(b)
	ctx := context.Background()
	opts.CacheDir = filepath.Join(b.TempDir(), "c")
	prog, err := native.Compile(ctx, p, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer prog.Close()
	it, err := fallback.New(p.Func(fn))
	if err != nil {
		b.Fatal(err)
	}
	pf := f.Func(fn)
	for _, batch := range batches {
		in, err := harness.GenerateInputs(f, pf, batch, f.Seed, nil)
		if err != nil {
			b.Fatal(err)
		}
		into, _ := benchOutputs(pf, batch)
		call, err := prog.Prepare(fn)
		if err != nil {
			b.Fatal(err)
		}
		var ins, outs []*tensor.Tensor
		for _, name := range call.Params() {
			ins = append(ins, in[name])
		}
		for _, name := range call.Results() {
			outs = append(outs, into[name])
		}
		execs := map[string]func() error{
			// RunInto by position (Program.Prepare): no names looked up.
			"native-call": func() error { _, err := call.RunInto(ctx, ins, outs); return err },
			"native":      func() error { _, err := prog.Run(ctx, fn, in); return err },
			"native-into": func() error { _, err := prog.RunInto(ctx, fn, in, into); return err },
			// Run, done with the outputs before the next call: they go back
			// for the next Run to reuse (Result.Release).
			"native-release": func() error {
				r, err := prog.Run(ctx, fn, in)
				if err == nil {
					r.Release()
				}
				return err
			},
			"fallback": func() error { _, err := it.Run(ctx, in); return err },
			"oracle":   func() error { _, err := oracle.Run(ctx, pf, in); return err },
		}
		for _, name := range executors {
			b.Run(fmt.Sprintf("%s/batch=%d", name, batch), func(b *testing.B) {
				run := execs[name]
				b.ReportAllocs()
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				cpu0, faults0 := cpuTime(), pageFaults()
				for b.Loop() {
					if err := run(); err != nil {
						b.Fatal(err)
					}
				}
				cpu, faults := cpuTime()-cpu0, pageFaults()-faults0
				runtime.ReadMemStats(&ms1)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(batch), "ns/row")
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(batch), "cpu-ns/row")
				// What a call costs the process beyond its own work: page
				// faults (first touches of memory the heap took from the
				// OS) and collections, per 1000 calls.
				b.ReportMetric(1000*float64(faults)/float64(b.N), "faults/kcall")
				b.ReportMetric(1000*float64(ms1.NumGC-ms0.NumGC)/float64(b.N), "gc/kcall")
			})
		}
	}
}

// benchOutputs allocates the outputs of function pf at a batch size, for
// RunInto, and returns their total element count.
func benchOutputs(pf *program.Func, batch int) (map[string]*tensor.Tensor, int) {
	into, elems := map[string]*tensor.Tensor{}, 0
	for _, r := range pf.Results {
		shape := make([]int, r.Type.Rank())
		n := 1
		for i, d := range r.Type.Shape {
			shape[i] = int(d.Size)
			if d.IsSym() {
				shape[i] = batch
			}
			n *= shape[i]
		}
		elems += n
		if r.Type.DType == ir.Int64 {
			into[r.Name] = tensor.NewInt64(shape...)
		} else {
			into[r.Name] = tensor.NewFloat32(shape...)
		}
	}
	return into, elems
}

// pageFaults is the process's minor page faults so far.
func pageFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt
}

// cpuTime is the process's CPU time so far (user and system, all threads:
// the GC's work included). On a machine shared with other jobs it is a
// steadier measure than the wall clock, which also counts the time the
// benchmark waited for a core; both are reported.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkScoreLinear compares the executors on the DESIGN example, in
// ns/row.
func BenchmarkScoreLinear(b *testing.B) {
	benchScoring(b, "score_linear", "native", "native-release", "native-into", "native-call", "fallback", "oracle")
}

// BenchmarkScoreMLP is score_mlp of the reference scenario on native code
// (Run, which allocates the outputs; Run with Result.Release, whose next
// call reuses them; RunInto, which writes into the caller's; and RunInto
// by position, a prepared Call).
func BenchmarkScoreMLP(b *testing.B) {
	benchScoring(b, "score_mlp", "native", "native-release", "native-into", "native-call")
}

// BenchmarkScorePipeline is score_pipeline of the reference scenario on
// native code (Run, Run with Release, RunInto, and RunInto by position).
func BenchmarkScorePipeline(b *testing.B) {
	benchScoring(b, "score_pipeline", "native", "native-release", "native-into", "native-call")
}

// BenchmarkOps is each single op of the reference functions
// (testdata/bench_ops.rx) through RunInto at B=1024, in CPU ns per row and
// per element of its output: what a function's ops cost on their own, so
// that a function's cost per row at a large batch can be read as the sum
// of its ops' (scripts/bench_report.py adds them up). 1024 rows keep an
// op's operands in L2, as the row tiles of a large batch do, and spread
// the call's own cost to a fraction of a ns per row. copy32 is a function
// without an op: its input copied to its output.
func BenchmarkOps(b *testing.B) {
	f, p := benchFile(b, "bench_ops.rx")
	ctx := context.Background()
	prog, err := native.Compile(ctx, p, native.Options{CacheDir: filepath.Join(b.TempDir(), "c")})
	if err != nil {
		b.Fatal(err)
	}
	defer prog.Close()
	const batch = 1024
	for _, pf := range f.Funcs {
		in, err := harness.GenerateInputs(f, pf, batch, f.Seed, nil)
		if err != nil {
			b.Fatal(err)
		}
		into, elems := benchOutputs(pf, batch)
		b.Run(pf.Name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := prog.RunInto(ctx, pf.Name, in, into); err != nil {
					b.Fatal(err)
				}
			}
			cpu := float64((cpuTime() - cpu0).Nanoseconds()) / float64(b.N)
			b.ReportMetric(cpu/batch, "cpu-ns/row")
			b.ReportMetric(cpu/float64(elems), "cpu-ns/elem")
		})
	}
}

// BenchmarkTileRows runs the three scoring functions at B=4096 and 65536
// through RunInto with row tiles of each size (native.Options.TileRows:
// 0 is the default choice, -1 no tiling), in ns/row.
func BenchmarkTileRows(b *testing.B) {
	for _, fn := range []string{"score_linear", "score_mlp", "score_pipeline"} {
		for _, rows := range []int{-1, 0, 256, 512, 1024, 2048} {
			b.Run(fmt.Sprintf("%s/tile=%d", fn, rows), func(b *testing.B) {
				benchScoringWith(b, fn, native.Options{TileRows: rows}, []int{4096, 65536}, "native-into")
			})
		}
	}
}

// BenchmarkEmptyCall is the cost of one call into an empty generated
// function (no inputs, no outputs, no body): cgo, the trampoline, the
// prologue and the epilogue.
func BenchmarkEmptyCall(b *testing.B) {
	p := &ir.Program{File: "empty.rx", Funcs: []*ir.Func{{Name: "empty", Pos: "empty.rx:1:1"}}}
	prog, err := native.Compile(context.Background(), p, native.Options{CacheDir: filepath.Join(b.TempDir(), "c")})
	if err != nil {
		b.Fatal(err)
	}
	defer prog.Close()
	ctx := context.Background()
	// native: Run, which allocates its Result; native-into: RunInto, which
	// writes into the caller's tensors (here none) and allocates nothing.
	b.Run("native", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := cpuTime()
		for b.Loop() {
			if _, err := prog.Run(ctx, "empty", nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
	b.Run("native-into", func(b *testing.B) {
		b.ReportAllocs()
		outputs := map[string]*tensor.Tensor{}
		cpu0 := cpuTime()
		for b.Loop() {
			if _, err := prog.RunInto(ctx, "empty", nil, outputs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
}

// BenchmarkCompile is the time from an IR program to a loaded program:
// cold (a program the cache has never seen: generate, compile, load; the
// runtime library is built once, before the timer, as in any session after
// its first compile) and warm (cached). ms/compile is the cold figure the
// fuzzer pays per candidate.
func BenchmarkCompile(b *testing.B) {
	_, p := benchProgram(b)
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "c")
		prog, err := native.Compile(ctx, p, native.Options{CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		prog.Close()
		i := 0
		for b.Loop() {
			i++
			// A fresh program each time: the same function under a new
			// name, so its source (and cache key) is new.
			q := *p
			fn := *p.Funcs[0]
			fn.Name = fmt.Sprintf("score_linear_%d", i)
			q.Funcs = []*ir.Func{&fn}
			prog, err := native.Compile(ctx, &q, native.Options{CacheDir: dir})
			if err != nil {
				b.Fatal(err)
			}
			prog.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/compile")
	})
	b.Run("cold-tcc", func(b *testing.B) {
		// The same with the program's C compiled by tcc (Options.ProgramCC),
		// as rxeq fuzz builds its candidates; the runtime is still $CC's.
		if _, err := exec.LookPath("tcc"); err != nil {
			b.Skip("tcc is not installed")
		}
		dir := filepath.Join(b.TempDir(), "c")
		opts := native.Options{CacheDir: dir, ProgramCC: "tcc"}
		prog, err := native.Compile(ctx, p, opts)
		if err != nil {
			b.Fatal(err)
		}
		prog.Close()
		i := 0
		for b.Loop() {
			i++
			q := *p
			fn := *p.Funcs[0]
			fn.Name = fmt.Sprintf("score_linear_%d", i)
			q.Funcs = []*ir.Func{&fn}
			prog, err := native.Compile(ctx, &q, opts)
			if err != nil {
				b.Fatal(err)
			}
			prog.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/compile")
	})
	b.Run("cold-empty-cache", func(b *testing.B) {
		base := b.TempDir()
		i := 0
		for b.Loop() {
			i++
			prog, err := native.Compile(ctx, p, native.Options{CacheDir: filepath.Join(base, fmt.Sprint(i))})
			if err != nil {
				b.Fatal(err)
			}
			prog.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/compile")
	})
	b.Run("warm", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "c")
		prog, err := native.Compile(ctx, p, native.Options{CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		prog.Close()
		for b.Loop() {
			prog, err := native.Compile(ctx, p, native.Options{CacheDir: dir})
			if err != nil {
				b.Fatal(err)
			}
			prog.Close()
		}
	})
}
