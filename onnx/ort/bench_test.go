package ort_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/scenarios"
	"github.com/rextio/rxeq/tensor"
)

// The benchmarks measure, on the catalog's reference scenario:
//
//   - BenchmarkScoring: the onnxruntime executor beside ONNX Runtime's own
//     Run on the same session ("ort-ns/row": into output tensors allocated
//     once), and beside native and torch (the generated C over rxeq's own
//     kernels and over ATen, each Run followed by Result.Release). The
//     executor is measured two ways: RunResult followed by Result.Release
//     ("ns/row", the path a loop over batches takes), whose overhead over
//     ONNX Runtime's Run is "overhead-%", and the plain executor.Prepared
//     Run, whose outputs are fresh memory on every call ("fresh-ns/row",
//     "fresh-overhead-%": what the runner pays, once per case), timed in
//     a loop of its own after the others (its garbage would otherwise
//     make a collection empty the pool that Release fills).
//     "x-native" is the executor's time over native's. PyTorch eager on
//     the same functions is scripts/bench_torch.py's; scripts/bench-ort.sh
//     runs both and prints them side by side.
//   - BenchmarkSession: creating one session per function (what Prepare
//     costs per function and level).
//   - BenchmarkFuzzPrograms: the ONNX Runtime part of `rxeq fuzz
//     --executors oracle,onnxruntime`, per generated program: export,
//     sessions, runs at its batches, close ("programs/s").

func benchLibrary(b *testing.B) *ort.Library {
	lib, err := ort.Find(libPath())
	if err != nil {
		b.Skip(err)
	}
	return lib
}

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

func BenchmarkScoring(b *testing.B) {
	lib := benchLibrary(b)
	f, p := benchReference(b)
	ctx := context.Background()
	cache := filepath.Join(b.TempDir(), "c")
	nat, err := native.Compile(ctx, p, native.Options{CacheDir: cache})
	if err != nil {
		b.Fatal(err)
	}
	defer nat.Close()
	// torch is left out, and says so, where libtorch is not installed.
	tor, err := native.Compile(ctx, p, native.Options{CacheDir: cache, Runtime: executor.Torch})
	if err != nil {
		b.Logf("torch left out: %v", err)
		tor = nil
	} else {
		defer tor.Close()
	}
	pr, err := ort.Executor{Library: libPath()}.Prepare(ctx, f, p)
	if err != nil {
		b.Fatal(err)
	}
	defer pr.Close()
	exec := pr.(*ort.Prepared)
	for _, fn := range []string{"score_linear", "score_mlp", "score_pipeline"} {
		pf := f.Func(fn)
		sig, err := onnx.Describe(p, fn)
		if err != nil {
			b.Fatal(err)
		}
		model, err := onnx.Export(p, fn, onnx.Meta{})
		if err != nil {
			b.Fatal(err)
		}
		var ins, outs []string
		for _, port := range sig.Inputs {
			ins = append(ins, port.Name)
		}
		for _, port := range sig.Outputs {
			outs = append(outs, port.Name)
		}
		if sig.Error != "" {
			outs = append(outs, sig.Error)
		}
		s, err := lib.NewSession(model, ins, outs, ort.SessionOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for _, batch := range []int{1, 16, 128, 4096, 65536} {
			in, err := harness.GenerateInputs(f, pf, batch, f.Seed, nil)
			if err != nil {
				b.Fatal(err)
			}
			var rawIn, rawOut []*tensor.Tensor
			for _, port := range sig.Inputs {
				rawIn = append(rawIn, in[port.Value.Name])
			}
			for _, port := range sig.Outputs {
				shape := ir.Concrete(port.Value.Type.Shape, map[string]int64{"B": int64(batch)})
				if port.Value.Type.DType == ir.Int64 {
					rawOut = append(rawOut, tensor.NewInt64(shape...))
				} else {
					rawOut = append(rawOut, tensor.NewFloat32(shape...))
				}
			}
			if sig.Error != "" {
				rawOut = append(rawOut, tensor.NewInt64(3))
			}
			b.Run(fmt.Sprintf("%s/batch=%d", fn, batch), func(b *testing.B) {
				// All of them are timed in turn in every iteration, so that
				// a busy machine slows them alike, by the wall clock and by
				// the CPU time of this thread (every one of them computes
				// on the calling thread: one intra-op thread), which other
				// jobs on a shared machine disturb less.
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var wall, cpu [5]time.Duration
				var tw [6]time.Time
				var tc [6]time.Duration
				mark := func(i int) { tw[i], tc[i] = time.Now(), threadCPU() }
				// One untimed call of each first: its outputs' first touch
				// (page faults) is not what a loop over batches pays, and
				// at B=65536 a benchmark runs only a few iterations.
				warm := func() {
					r, err := exec.RunResult(ctx, fn, in)
					if err != nil {
						b.Fatal(err)
					}
					r.Release()
					if err := s.Run(ctx, rawIn, rawOut); err != nil {
						b.Fatal(err)
					}
					nr, err := nat.Run(ctx, fn, in)
					if err != nil {
						b.Fatal(err)
					}
					nr.Release()
					if tor != nil {
						tr, err := tor.Run(ctx, fn, in)
						if err != nil {
							b.Fatal(err)
						}
						tr.Release()
					}
				}
				warm()
				// timed adds the time of run to wall[i] and cpu[i].
				timed := func(i int, run func()) {
					mark(i)
					run()
					mark(i + 1)
					wall[i] += tw[i+1].Sub(tw[i])
					cpu[i] += tc[i+1] - tc[i]
				}
				runExec := func() {
					timed(0, func() {
						r, err := exec.RunResult(ctx, fn, in)
						if err != nil {
							b.Fatal(err)
						}
						r.Release()
					})
				}
				runORT := func() {
					timed(2, func() { // the plain Run (1) is timed after the loop
						if err := s.Run(ctx, rawIn, rawOut); err != nil {
							b.Fatal(err)
						}
					})
				}
				// The executor and ONNX Runtime's own Run take turns at
				// going first: the first call of an iteration finds the
				// inputs evicted by torch's run before it (at B=65536 the
				// inputs are 8 MiB), the second finds them in cache, and
				// a fixed order charges that to one of them.
				for iter := 0; b.Loop(); iter++ {
					if iter%2 == 0 {
						runExec()
						runORT()
					} else {
						runORT()
						runExec()
					}
					mark(3)
					nr, err := nat.Run(ctx, fn, in)
					if err != nil {
						b.Fatal(err)
					}
					nr.Release()
					mark(4)
					if tor != nil {
						tr, err := tor.Run(ctx, fn, in)
						if err != nil {
							b.Fatal(err)
						}
						tr.Release()
					}
					mark(5)
					for i := range wall {
						if i < 3 {
							continue
						}
						wall[i] += tw[i+1].Sub(tw[i])
						cpu[i] += tc[i+1] - tc[i]
					}
				}
				// The plain Run leaves its outputs to the collector: timed
				// in the loop above, its garbage would make the collector
				// run (and the calls above assist it) on their time too.
				// So it runs as many times after it, on its own.
				for range b.N {
					mark(1)
					if _, err := exec.Run(ctx, fn, in); err != nil {
						b.Fatal(err)
					}
					mark(2)
					wall[1] += tw[2].Sub(tw[1])
					cpu[1] += tc[2] - tc[1]
				}
				perRow := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) / float64(batch) }
				pct := func(d, base time.Duration) float64 { return 100 * float64(d-base) / float64(base) }
				const reuse, fresh, raw, nat, tch = 0, 1, 2, 3, 4
				b.ReportMetric(perRow(wall[reuse]), "ns/row")
				b.ReportMetric(perRow(wall[fresh]), "fresh-ns/row")
				b.ReportMetric(perRow(wall[raw]), "ort-ns/row")
				b.ReportMetric(perRow(wall[nat]), "native-ns/row")
				b.ReportMetric(perRow(cpu[reuse]), "cpu-ns/row")
				b.ReportMetric(perRow(cpu[fresh]), "fresh-cpu-ns/row")
				b.ReportMetric(perRow(cpu[raw]), "ort-cpu-ns/row")
				b.ReportMetric(perRow(cpu[nat]), "native-cpu-ns/row")
				if tor != nil {
					b.ReportMetric(perRow(wall[tch]), "torch-ns/row")
					b.ReportMetric(perRow(cpu[tch]), "torch-cpu-ns/row")
				}
				b.ReportMetric(pct(wall[reuse], wall[raw]), "overhead-%")
				b.ReportMetric(pct(cpu[reuse], cpu[raw]), "cpu-overhead-%")
				b.ReportMetric(pct(wall[fresh], wall[raw]), "fresh-overhead-%")
				b.ReportMetric(pct(cpu[fresh], cpu[raw]), "fresh-cpu-overhead-%")
				b.ReportMetric(float64(wall[reuse])/float64(wall[nat]), "x-native")
			})
		}
		_ = s.Close()
	}
}

func BenchmarkSession(b *testing.B) {
	lib := benchLibrary(b)
	_, p := benchReference(b)
	for _, fn := range []string{"score_linear", "score_mlp", "score_pipeline"} {
		sig, _ := onnx.Describe(p, fn)
		model, err := onnx.Export(p, fn, onnx.Meta{})
		if err != nil {
			b.Fatal(err)
		}
		var ins, outs []string
		for _, port := range sig.Inputs {
			ins = append(ins, port.Name)
		}
		for _, port := range sig.Outputs {
			outs = append(outs, port.Name)
		}
		if sig.Error != "" {
			outs = append(outs, sig.Error)
		}
		for _, level := range []ort.Level{ort.Optimize, ort.NoOptimize} {
			name := "opt"
			if level == ort.NoOptimize {
				name = "noopt"
			}
			b.Run(fmt.Sprintf("%s/%s", fn, name), func(b *testing.B) {
				for b.Loop() {
					s, err := lib.NewSession(model, ins, outs, ort.SessionOptions{Level: level})
					if err != nil {
						b.Fatal(err)
					}
					_ = s.Close()
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/session")
			})
		}
	}
}

// fuzzSeeds are the programs BenchmarkFuzzPrograms cycles through: seeds
// 1 to 60 (seed 72 makes ONNX Runtime 1.30 crash with its optimizations
// on; see docs/onnx.md).
const fuzzSeeds = 60

func BenchmarkFuzzPrograms(b *testing.B) {
	benchLibrary(b)
	type prog struct {
		f *program.File
		p *ir.Program
	}
	var progs []prog
	for seed := uint64(1); seed <= fuzzSeeds; seed++ {
		g := fuzz.Generate(seed, fuzz.Config{})
		f, err := program.Parse(fmt.Sprintf("seed-%d.rx", seed), g.Source)
		if err != nil {
			continue
		}
		p, err := program.Lower(f)
		if err != nil {
			continue
		}
		progs = append(progs, prog{f, p})
	}
	ctx := context.Background()
	for _, level := range []ort.Level{ort.Optimize, ort.NoOptimize} {
		e := ort.Executor{Library: libPath(), Level: level}
		b.Run(string(e.Name()), func(b *testing.B) {
			var prepare time.Duration
			n := 0
			for b.Loop() {
				pg := progs[n%len(progs)]
				n++
				t0 := time.Now()
				pr, err := e.Prepare(ctx, pg.f, pg.p)
				prepare += time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				for _, fn := range pg.f.Funcs {
					for _, batch := range pg.f.Batches {
						in, err := harness.GenerateInputs(pg.f, fn, batch, pg.f.Seed, nil)
						if err != nil {
							continue
						}
						_, _ = pr.Run(ctx, fn.Name, in)
					}
				}
				_ = pr.Close()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "programs/s")
			b.ReportMetric(float64(prepare.Microseconds())/1000/float64(b.N), "prepare-ms/program")
		})
	}
}

// threadCPU returns the CPU time the calling OS thread has used
// (CLOCK_THREAD_CPUTIME_ID); the caller locks its goroutine to the thread.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		panic(errno)
	}
	return time.Duration(ts.Nano())
}
