//go:build cgo

package native_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/native/runtime"
)

// eagerPython is the interpreter of the PyTorch eager baseline
// (RXEQ_PYTHON, else Debian's /usr/bin/python3, which has python3-torch).
func eagerPython() string {
	if p := os.Getenv("RXEQ_PYTHON"); p != "" {
		return p
	}
	return "/usr/bin/python3"
}

// eager is a running testdata/score_linear_eager.py that times PyTorch
// eager on request, one thread.
type eager struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startEager() (*eager, error) {
	cmd := exec.Command(eagerPython(), "testdata/score_linear_eager.py")
	cmd.Env = append(os.Environ(), "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &eager{cmd: cmd, in: in, out: bufio.NewScanner(out)}, nil
}

// nsPerRow times PyTorch eager at batch.
func (e *eager) nsPerRow(batch int) (float64, error) {
	if _, err := fmt.Fprintln(e.in, batch); err != nil {
		return 0, err
	}
	if !e.out.Scan() {
		return 0, fmt.Errorf("%s ended: %v", eagerPython(), e.out.Err())
	}
	f := strings.Fields(e.out.Text())
	if len(f) != 2 {
		return 0, fmt.Errorf("unexpected line %q", e.out.Text())
	}
	return strconv.ParseFloat(f[1], 64)
}

func (e *eager) close() {
	e.in.Close()
	_ = e.cmd.Wait()
}

// BenchmarkScoreLinearTorch runs the DESIGN example on the torch runtime
// (one intra-op thread) beside the native runtime, in ns/row, at the
// batches of BenchmarkScoreLinear.
//
// When PyTorch is importable by eagerPython, the same function written as
// PyTorch eager code (testdata/score_linear_eager.py, one thread, in
// inference mode, the mean over one second as b.Loop's) is timed by Python
// right before and right after each torch sub-benchmark, so that both see
// the same machine load; the torch sub-benchmark then reports
// "eager-ns/row", the mean of the two, and "eager-ratio", its own ns/row
// over that (below 1: faster than PyTorch eager). "torch-gc-paused" runs
// the torch calls with Go's garbage collector paused, to show what the
// collection of the per-call output tensors costs.
func BenchmarkScoreLinearTorch(b *testing.B) {
	if _, err := runtime.FindTorch(""); err != nil {
		b.Skip(err)
	}
	f, p := benchProgram(b)
	ctx := context.Background()
	cache := filepath.Join(b.TempDir(), "c")
	tp, err := native.Compile(ctx, p, native.Options{CacheDir: cache, Runtime: executor.Torch, TorchThreads: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer tp.Close()
	np, err := native.Compile(ctx, p, native.Options{CacheDir: cache})
	if err != nil {
		b.Fatal(err)
	}
	defer np.Close()
	py, err := startEager()
	if err != nil {
		b.Logf("no PyTorch eager baseline: %v", err)
		py = nil
	} else {
		defer py.close()
	}
	for _, batch := range []int{1, 16, 128, 4096, 65536} {
		in := benchInputs(f, batch)
		b.Run(fmt.Sprintf("torch/batch=%d", batch), func(b *testing.B) {
			var before float64
			if py != nil {
				if before, err = py.nsPerRow(batch); err != nil {
					b.Logf("no PyTorch eager baseline: %v", err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := tp.Run(ctx, "score_linear", in); err != nil {
					b.Fatal(err)
				}
			}
			perRow := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(batch)
			b.ReportMetric(perRow, "ns/row")
			if before > 0 {
				after, err := py.nsPerRow(batch)
				if err == nil && after > 0 {
					e := (before + after) / 2
					b.ReportMetric(e, "eager-ns/row")
					b.ReportMetric(perRow/e, "eager-ratio")
				}
			}
		})
		// The same through RunInto, which writes into output tensors the
		// caller keeps (as PyTorch's out= does): no Go allocation per call,
		// so what is measured is the generated C over ATen's kernels.
		b.Run(fmt.Sprintf("torch-into/batch=%d", batch), func(b *testing.B) {
			first, err := tp.Run(ctx, "score_linear", in)
			if err != nil {
				b.Fatal(err)
			}
			into := first.Outputs
			var before float64
			if py != nil {
				before, _ = py.nsPerRow(batch)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := tp.RunInto(ctx, "score_linear", in, into); err != nil {
					b.Fatal(err)
				}
			}
			perRow := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(batch)
			b.ReportMetric(perRow, "ns/row")
			if before > 0 {
				if after, err := py.nsPerRow(batch); err == nil && after > 0 {
					e := (before + after) / 2
					b.ReportMetric(e, "eager-ns/row")
					b.ReportMetric(perRow/e, "eager-ratio")
				}
			}
		})
		// The same with Go's garbage collector paused: what the call costs
		// without collecting the outputs Go allocates for every call (a
		// diagnostic, not a way to run).
		b.Run(fmt.Sprintf("torch-gc-paused/batch=%d", batch), func(b *testing.B) {
			old := debug.SetGCPercent(-1)
			defer func() {
				debug.SetGCPercent(old)
				goruntime.GC()
			}()
			for b.Loop() {
				if _, err := tp.Run(ctx, "score_linear", in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(batch), "ns/row")
		})
		b.Run(fmt.Sprintf("native/batch=%d", batch), func(b *testing.B) {
			for b.Loop() {
				if _, err := np.Run(ctx, "score_linear", in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(batch), "ns/row")
		})
	}
}
