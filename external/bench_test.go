package external_test

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rextio/rxeq/external"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// BenchmarkExternalRoundTrip measures one run through an external
// executor on echo(x [B][32]float32): the request with x, the result with
// y, framing, checksums and checks, at B=1 (the per-call overhead) and
// B=65536 (8 MiB each way: the per-byte cost). "go" is this test binary
// serving the protocol in Go (its echo runs in the fallback interpreter,
// a copy); "python" is python/rxeq_executor.py with NumPy on
// /usr/bin/python3 (skipped without it). Metrics: ns/call (the mean),
// min-ns/call (the fastest call: on a shared machine the mean moves with
// the load), rxeq-cpu-ns/call (the CPU time of this process per call,
// user and system: rxeq's side of the exchange, not the executor's
// process, and much less moved by the load), and ns/byte over the bytes that
// cross the pipes (input and output).
func BenchmarkExternalRoundTrip(b *testing.B) {
	src, err := os.ReadFile("testdata/echo.rx")
	if err != nil {
		b.Fatal(err)
	}
	f, err := program.Parse("echo.rx", src)
	if err != nil {
		b.Fatal(err)
	}
	p, err := program.Lower(f)
	if err != nil {
		b.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	adapter, _ := filepath.Abs("../python/rxeq_executor.py")
	module, _ := filepath.Abs("testdata/python/echo.py")
	kinds := []struct {
		name string
		opts external.Options
		need func() bool
	}{
		{"go", external.Options{Name: "go", Command: []string{self}, Env: []string{external.FakeExecutorEnv + "=ok"}}, func() bool { return true }},
		{"python", external.Options{Name: "python", Command: []string{systemPython, adapter, module}}, func() bool {
			return exec.Command(systemPython, "-c", "import numpy").Run() == nil
		}},
	}
	for _, k := range kinds {
		for _, batch := range []int{1, 65536} {
			b.Run(k.name+"/B="+strconv.Itoa(batch), func(b *testing.B) {
				if !k.need() {
					b.Skip(systemPython + " with numpy is not installed")
				}
				e, err := external.New(k.opts)
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				pr, err := e.Prepare(context.Background(), f, p)
				if err != nil {
					b.Fatal(err)
				}
				defer pr.Close()
				x := tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 1}, 1, batch, 32)
				in := map[string]*tensor.Tensor{"x": x}
				crossing := float64(2 * 4 * len(x.F32))
				b.SetBytes(int64(crossing))
				fastest := time.Duration(math.MaxInt64)
				b.ResetTimer()
				cpu0 := cpuTime()
				for b.Loop() {
					t0 := time.Now()
					if _, err := pr.Run(context.Background(), "echo", in); err != nil {
						b.Fatal(err)
					}
					fastest = min(fastest, time.Since(t0))
				}
				cpu := cpuTime() - cpu0
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(ns, "ns/call")
				b.ReportMetric(float64(fastest.Nanoseconds()), "min-ns/call")
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "rxeq-cpu-ns/call")
				b.ReportMetric(ns/crossing, "ns/byte")
			})
		}
	}
}

// cpuTime returns the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
