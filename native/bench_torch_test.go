package native_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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

// eagerNsPerRow runs testdata/score_linear_eager.py once for every batch
// and returns PyTorch eager's ns/row by batch (one thread), or why not.
func eagerNsPerRow(batches []int) (map[int]float64, error) {
	args := []string{"testdata/score_linear_eager.py"}
	for _, b := range batches {
		args = append(args, strconv.Itoa(b))
	}
	cmd := exec.Command(eagerPython(), args...)
	cmd.Env = append(os.Environ(), "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(stderr.String()))
	}
	res := map[int]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		b, err1 := strconv.Atoi(f[0])
		ns, err2 := strconv.ParseFloat(f[1], 64)
		if err1 == nil && err2 == nil {
			res[b] = ns
		}
	}
	return res, nil
}

// BenchmarkScoreLinearTorch runs the DESIGN example on the torch runtime
// (one intra-op thread) beside the native runtime, in ns/row, at the
// batches of BenchmarkScoreLinear. When PyTorch is importable by
// eagerPython, the same function written as PyTorch eager code is timed
// once beforehand (one thread) and each torch and native sub-benchmark
// also reports "eager-ratio": its ns/row over eager's (below 1 is faster
// than PyTorch eager); the "pytorch-eager" sub-benchmarks report eager's
// ns/row as measured by Python (their ns/op is not meaningful).
func BenchmarkScoreLinearTorch(b *testing.B) {
	if _, err := runtime.FindTorch(); err != nil {
		b.Skip(err)
	}
	f, p := benchProgram(b)
	ctx := context.Background()
	cache := filepath.Join(b.TempDir(), "c")
	tp, err := native.Compile(ctx, p, native.Options{CacheDir: cache, Runtime: native.RuntimeTorch, TorchThreads: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer tp.Close()
	np, err := native.Compile(ctx, p, native.Options{CacheDir: cache})
	if err != nil {
		b.Fatal(err)
	}
	defer np.Close()
	batches := []int{1, 16, 128, 4096, 65536}
	eager, eagerErr := eagerNsPerRow(batches)
	if eagerErr != nil {
		b.Logf("no PyTorch eager baseline: %v", eagerErr)
	}
	for _, batch := range batches {
		in := benchInputs(f, batch)
		for _, name := range []string{"torch", "native"} {
			prog := map[string]*native.Program{"torch": tp, "native": np}[name]
			b.Run(fmt.Sprintf("%s/batch=%d", name, batch), func(b *testing.B) {
				for b.Loop() {
					if _, err := prog.Run(ctx, "score_linear", in); err != nil {
						b.Fatal(err)
					}
				}
				perRow := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(batch)
				b.ReportMetric(perRow, "ns/row")
				if e, ok := eager[batch]; ok && e > 0 {
					b.ReportMetric(perRow/e, "eager-ratio")
				}
			})
		}
		if e, ok := eager[batch]; ok {
			b.Run(fmt.Sprintf("pytorch-eager/batch=%d", batch), func(b *testing.B) {
				for b.Loop() {
				}
				b.ReportMetric(e, "ns/row")
			})
		}
	}
}
