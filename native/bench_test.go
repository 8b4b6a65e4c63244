package native_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

func benchProgram(b *testing.B) (*program.File, *ir.Program) {
	src, err := os.ReadFile("testdata/score_linear.rx")
	if err != nil {
		b.Fatal(err)
	}
	f, err := program.Parse("score_linear.rx", src)
	if err != nil {
		b.Fatal(err)
	}
	p, err := program.Lower(f)
	if err != nil {
		b.Fatal(err)
	}
	return f, p
}

func benchInputs(f *program.File, batch int) map[string]*tensor.Tensor {
	in := map[string]*tensor.Tensor{}
	for name, shape := range map[string][]int{"x": {batch, 32}, "w": {32, 8}, "b": {8}} {
		d, _ := f.Input(name)
		in[name] = tensor.Generate(d, tensor.DeriveSeed(1, name), shape...)
	}
	return in
}

// BenchmarkScoreLinear compares the executors on the DESIGN example, in
// ns/row.
func BenchmarkScoreLinear(b *testing.B) {
	f, p := benchProgram(b)
	ctx := context.Background()
	prog, err := native.Compile(ctx, p, native.Options{CacheDir: filepath.Join(b.TempDir(), "c")})
	if err != nil {
		b.Fatal(err)
	}
	defer prog.Close()
	it, err := fallback.New(p.Func("score_linear"))
	if err != nil {
		b.Fatal(err)
	}
	fn := f.Func("score_linear")
	for _, batch := range []int{1, 16, 128, 4096, 65536} {
		in := benchInputs(f, batch)
		execs := map[string]func() error{
			"native":   func() error { _, err := prog.Run(ctx, "score_linear", in); return err },
			"fallback": func() error { _, err := it.Run(ctx, in); return err },
			"oracle":   func() error { _, err := oracle.Run(ctx, fn, in); return err },
		}
		for _, name := range []string{"native", "fallback", "oracle"} {
			b.Run(fmt.Sprintf("%s/batch=%d", name, batch), func(b *testing.B) {
				run := execs[name]
				for b.Loop() {
					if err := run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(batch), "ns/row")
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
	for b.Loop() {
		if _, err := prog.Run(ctx, "empty", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompile is the time from an IR program to a loaded program:
// cold (an empty cache: generate, compile, load) and warm (cached).
func BenchmarkCompile(b *testing.B) {
	_, p := benchProgram(b)
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
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
