package fuzz

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/jsexport"
	"github.com/rextio/rxeq/onnx/ort"
)

// TestReproOfAFinding: a finding of a generated-code executor is saved
// with a standalone repro.py that reproduces it (PyTorch's relu(-0) is
// -0, so 1 / Relu(-0) is -Inf where rxeq says +Inf); other executors'
// findings get none.
func TestReproOfAFinding(t *testing.T) {
	if exec.Command("/usr/bin/python3", "-c", "import numpy, torch").Run() != nil {
		t.Skip("/usr/bin/python3 cannot import numpy and torch (CI installs python3-numpy and python3-torch)")
	}
	src := []byte(`//rx:scenario relu-negzero
//rx:batches 2
//rx:input x const(-0.0)
package s

func f(x [B][4]float32) (y [B][4]float32) {
	y = 1.0 / Relu(x)
	return
}
`)
	c := &Campaign{}
	if c.repro(src, Finding{Kind: KindMismatch, Executor: executor.Native, Func: "f", Batch: 2}) != nil {
		t.Fatal("a native finding got a repro.py")
	}
	b := c.repro(src, Finding{Kind: KindMismatch, Executor: executor.PyTorch, Func: "f", Batch: 2})
	if b == nil {
		t.Fatal("no repro.py for a pytorch finding")
	}
	path := filepath.Join(t.TempDir(), "seed-1.repro.py")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/usr/bin/python3", "-B", path).CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "want inf got -inf") {
		t.Fatalf("repro.py: %v\n%s", err, out)
	}
}

// TestReproJSOfAFinding: a finding of a TensorFlow.js executor is saved
// with a standalone repro.js (the wasm backend's tf.maximum(-0, +0) is
// -0, so 1 / Maximum is -Inf where rxeq says +Inf), which plain node
// runs with the packages and which exits 1.
func TestReproJSOfAFinding(t *testing.T) {
	dir := os.Getenv("RXEQ_TFJS_DIR")
	if dir == "" {
		dir = jsexport.DefaultDir()
	}
	if err := jsexport.Available(executor.TFJSWasm, jsexport.ExecutorOptions{Dir: dir}); err != nil {
		if os.Getenv("RXEQ_REQUIRE_TFJS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	src := []byte(`//rx:scenario maximum-signed-zero
//rx:batches 2
//rx:input x const(-0.0)
package s

func f(x [B][4]float32) (y [B][4]float32) {
	y = 1.0 / Maximum(x, -x)
	return
}
`)
	c := &Campaign{}
	name, b := c.reproFile(src, Finding{Kind: KindMismatch, Executor: executor.TFJSWasm, Func: "f", Batch: 2})
	if b == nil || name != "repro.js" {
		t.Fatalf("no repro.js for a tfjs-wasm finding: %q", name)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", path)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "want Infinity got -Infinity") {
		t.Fatalf("repro.js: %v\n%s", err, out)
	}
}

// TestReproOfAnORTFinding: a finding of onnxruntime or onnxruntime-noopt
// is saved with the standalone repro.py of ortrepro.Repro, which drives
// ONNX Runtime's C library through ctypes (ONNX Runtime's Max returns its
// second operand of two equal ones, so Maximum(+0, -0) is -0 and 1 / it
// is -Inf where rxeq says +Inf).
func TestReproOfAnORTFinding(t *testing.T) {
	if _, err := ort.Find(os.Getenv("RXEQ_ORT_LIB")); err != nil {
		if os.Getenv("RXEQ_REQUIRE_ORT") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	src := []byte(`//rx:scenario maximum-signed-zero
//rx:batches 2
//rx:input x const(0.0)
package s

func f(x [B][4]float32) (y [B][4]float32) {
	y = 1.0 / Maximum(x, -x)
	return
}
`)
	c := &Campaign{}
	for _, e := range []executor.Name{executor.ONNXRuntime, executor.ONNXRuntimeNoOpt} {
		name, b := c.reproFile(src, Finding{Kind: KindMismatch, Executor: e, Func: "f", Batch: 2})
		if b == nil || name != "repro.py" {
			t.Fatalf("no repro.py for an %s finding: %q", e, name)
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("/usr/bin/python3", "-B", path).CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "want inf (0x7ff0000000000000) got -inf (0xff800000)") {
			t.Fatalf("%s's repro.py: %v\n%s", e, err, out)
		}
	}
}
