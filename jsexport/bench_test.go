package jsexport_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/jsexport"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// BenchmarkTFJS runs the reference scenario's functions through
// tfjs-cpu and tfjs-wasm at B = 1, 16, 128 and 4096 and reports ns/row
// through the executor (rxeq's side: framing, pipes, copies, checksums,
// checks) and min-ns/call, its fastest call; tfjs-min-ns/call, the
// fastest of the same calls measured inside node by a standalone script
// (the exported function with its inputs as tensors already, its outputs
// read with dataSync): the time TF.js itself spends; overhead-%, how
// much more the executor's fastest call costs than TF.js's; and
// rxeq-cpu-ns/call, the CPU time (user and system) of this process per
// call, rxeq's side alone (node's is not in it), which the load moves
// much less. Fastest calls, not means, because on a shared machine the
// means move with the load by more than the overhead.
//
//	go test ./jsexport -run '^$' -bench TFJS -benchtime 200x
func BenchmarkTFJS(b *testing.B) {
	dir := tfjsDirB()
	for _, name := range []executor.Name{executor.TFJSCPU, executor.TFJSWasm} {
		if err := jsexport.Available(name, jsexport.ExecutorOptions{Dir: dir}); err != nil {
			b.Skip(err)
		}
	}
	src, err := os.ReadFile("../scenarios/reference.rx")
	if err != nil {
		b.Fatal(err)
	}
	f, err := program.Parse("scenarios/reference.rx", src)
	if err != nil {
		b.Fatal(err)
	}
	p, err := program.Lower(f)
	if err != nil {
		b.Fatal(err)
	}
	m, err := jsexport.Export(p, jsexport.Options{Source: "scenarios/reference.rx", Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []executor.Name{executor.TFJSCPU, executor.TFJSWasm} {
		e, err := jsexport.NewExecutor(name, jsexport.ExecutorOptions{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		pr, err := e.Prepare(context.Background(), f, p)
		if err != nil {
			b.Fatal(err)
		}
		for _, fn := range f.Funcs {
			for _, batch := range []int{1, 16, 128, 4096} {
				b.Run(fmt.Sprintf("%s/%s/B=%d", name, fn.Name, batch), func(b *testing.B) {
					in, err := harness.GenerateInputs(f, fn, batch, f.Seed, nil)
					if err != nil {
						b.Fatal(err)
					}
					fastest := time.Duration(math.MaxInt64)
					cpu0 := cpuTime()
					for b.Loop() {
						t0 := time.Now()
						if _, err := pr.Run(context.Background(), fn.Name, in); err != nil {
							b.Fatal(err)
						}
						fastest = min(fastest, time.Since(t0))
					}
					cpu := cpuTime() - cpu0
					ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
					b.ReportMetric(ns/float64(batch), "ns/row")
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "rxeq-cpu-ns/call")
					b.ReportMetric(float64(fastest.Nanoseconds()), "min-ns/call")
					inner := inNode(b, dir, name, string(m.Source), p.Func(fn.Name), in, max(b.N, 20))
					b.ReportMetric(inner, "tfjs-min-ns/call")
					b.ReportMetric(100*(float64(fastest.Nanoseconds())-inner)/inner, "overhead-%")
					b.ReportMetric(0, "ns/op")
				})
			}
		}
		_ = pr.Close()
		_ = e.Close()
	}
}

func tfjsDirB() string {
	if d := os.Getenv("RXEQ_TFJS_DIR"); d != "" {
		return d
	}
	return jsexport.DefaultDir()
}

// inNode times n calls of fn inside node, after 20 to warm up, and
// returns the fastest call's ns.
func inNode(b *testing.B, dir string, name executor.Name, module string, fn *ir.Func, in map[string]*tensor.Tensor, n int) float64 {
	b.Helper()
	tmp := b.TempDir()
	backend := `require('@tensorflow/tfjs-backend-cpu');
const ready = tf.setBackend('cpu');`
	if name == executor.TFJSWasm {
		backend = `const wasm = require('@tensorflow/tfjs-backend-wasm');
wasm.setWasmPaths(require('path').dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')) + '/dist/');
wasm.setThreadsCount(1);
const ready = tf.setBackend('wasm');`
	}
	script := fmt.Sprintf(`'use strict';
const tf = require('@tensorflow/tfjs-core');
%s
const m = require('./m.js');
ready.then(() => {
  const args = [%s];
  const once = () => {
    const out = m.%s(...args);
    for (const v of Object.values(out)) {
      if (v instanceof tf.Tensor) { v.dataSync(); v.dispose(); }
    }
  };
  for (let i = 0; i < 20; i++) once();
  let fastest = Infinity;
  for (let i = 0; i < %d; i++) {
    const t0 = process.hrtime.bigint();
    once();
    fastest = Math.min(fastest, Number(process.hrtime.bigint() - t0));
  }
  process.stdout.write(String(fastest));
});
`, backend, jsInputs(fn, in), fn.Name, n)
	for file, text := range map[string]string{"m.js": module, "main.js": script} {
		if err := os.WriteFile(filepath.Join(tmp, file), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cmd := exec.Command("node", "main.js")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("node: %v", err)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		b.Fatalf("node printed %q", out)
	}
	return v
}

// BenchmarkPipeFloor measures the floor under any out-of-process
// executor in node: a round trip over a pair of pipes between this
// process (Go's poller, as rxeq's supervisor reads and writes them) and
// a node script that reads a request of a known size with fs.readSync
// and answers with fs.writeSync (as serve.js does), with no framing, no
// JSON, no TF.js and no checksums. "4B" sends 4 bytes each way; "score_linear/B=128"
// sends as many bytes as a run of score_linear at B = 128 carries (its
// inputs: 17448 bytes) and answers with as many as its result carries (its outputs:
// 9216 bytes), the frames' headers left out. Metrics: ns/call (the mean)
// and min-ns/call (the fastest), to set against BenchmarkTFJS's
// min-ns/call and tfjs-min-ns/call.
//
//	go test ./jsexport -run '^$' -bench PipeFloor -benchtime 2000x
func BenchmarkPipeFloor(b *testing.B) {
	if _, err := exec.LookPath("node"); err != nil {
		b.Skip("node is not installed")
	}
	const script = `'use strict';
const fs = require('fs');
const req = Number(process.argv[1]), resp = Number(process.argv[2]);
const inb = Buffer.alloc(req), outb = Buffer.alloc(resp, 7);
for (;;) {
  let got = 0;
  while (got < req) {
    const k = fs.readSync(0, inb, got, req - got, null);
    if (k === 0) process.exit(0);
    got += k;
  }
  let off = 0;
  while (off < resp) off += fs.writeSync(1, outb, off, resp - off);
}
`
	for _, c := range []struct {
		name      string
		req, resp int
	}{
		{"4B", 4, 4},
		// x [128][32], w [32][8], b [8] float32 in; logits and probs
		// [128][8] float32 and classes [128] int64 out.
		{"score_linear/B=128", 4 * (128*32 + 32*8 + 8), 4*2*128*8 + 8*128},
	} {
		b.Run(c.name, func(b *testing.B) {
			inR, inW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			outR, outW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command("node", "-e", script, strconv.Itoa(c.req), strconv.Itoa(c.resp))
			cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			inR.Close()
			outW.Close()
			defer func() {
				inW.Close()
				_ = cmd.Wait()
				outR.Close()
			}()
			req, resp := make([]byte, c.req), make([]byte, c.resp)
			once := func() {
				if _, err := inW.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(outR, resp); err != nil {
					b.Fatal(err)
				}
			}
			for range 50 {
				once() // node's start and JIT
			}
			fastest := time.Duration(math.MaxInt64)
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				once()
				fastest = min(fastest, time.Since(t0))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/call")
			b.ReportMetric(float64(fastest.Nanoseconds()), "min-ns/call")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// cpuTime returns the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
