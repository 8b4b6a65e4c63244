package ort_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

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
//   - BenchmarkScoring: the onnxruntime executor's Run (boundary checks,
//     output allocation, the call) beside ONNX Runtime's own Run on the
//     same session and tensors ("ort-ns/row") and beside native, with the
//     executor's overhead over ONNX Runtime's Run in percent
//     ("overhead-%") and its time as a multiple of native's ("x-native").
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
	prog, err := native.Compile(ctx, p, native.Options{CacheDir: filepath.Join(b.TempDir(), "c")})
	if err != nil {
		b.Fatal(err)
	}
	defer prog.Close()
	for _, fn := range []string{"score_linear", "score_pipeline"} {
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
		pr, err := ort.Executor{Library: libPath()}.Prepare(ctx, f, p)
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
				// The three are timed in turn in every iteration, so that a
				// busy machine slows them alike.
				var exec, raw, nat time.Duration
				for b.Loop() {
					t0 := time.Now()
					if _, err := pr.Run(ctx, fn, in); err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					if err := s.Run(ctx, rawIn, rawOut); err != nil {
						b.Fatal(err)
					}
					t2 := time.Now()
					if _, err := prog.Run(ctx, fn, in); err != nil {
						b.Fatal(err)
					}
					t3 := time.Now()
					exec, raw, nat = exec+t1.Sub(t0), raw+t2.Sub(t1), nat+t3.Sub(t2)
				}
				perRow := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) / float64(batch) }
				b.ReportMetric(perRow(exec), "ns/row")
				b.ReportMetric(perRow(raw), "ort-ns/row")
				b.ReportMetric(perRow(nat), "native-ns/row")
				b.ReportMetric(100*float64(exec-raw)/float64(raw), "overhead-%")
				b.ReportMetric(float64(exec)/float64(nat), "x-native")
			})
		}
		_ = pr.Close()
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
