package jsexport

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/external"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// TestServeCatchesLeaksAndKeepsStdout: serve.js fails a call that leaves
// a tensor behind (what tf.tidy in every exported function prevents),
// with a text that says how many; a module's console.log goes to stderr,
// not into the protocol; and the next call of a function that does not
// leak passes.
func TestServeCatchesLeaksAndKeepsStdout(t *testing.T) {
	dir := os.Getenv("RXEQ_TFJS_DIR")
	if dir == "" {
		dir = DefaultDir()
	}
	if err := Available(executor.TFJSCPU, ExecutorOptions{Dir: dir}); err != nil {
		if os.Getenv("RXEQ_REQUIRE_TFJS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	f, err := program.Parse("leak.rx", []byte("package leak\nfunc f(x [B]float32) (y [B]float32) {\n\ty = x * 2.0\n\treturn\n}\n\nfunc g(x [B]float32) (y [B]float32) {\n\ty = x * 2.0\n\treturn\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := program.Lower(f)
	if err != nil {
		t.Fatal(err)
	}
	const module = `'use strict';
const tf = require('@tensorflow/tfjs-core');
function f(x) {
  console.log('hello from f');
  tf.add(x, 1);
  return { y: tf.mul(x, 2) };
}
function g(x) {
  console.log('hello from g');
  return tf.tidy(() => ({ y: tf.mul(x, 2) }));
}
module.exports = { f, g };
`
	e, err := external.New(external.Options{
		Name:    string(executor.TFJSCPU),
		Command: []string{DefaultNode, "-e", serveBootstrap, string(executor.TFJSCPU)},
		Env:     []string{"RXEQ_TFJS_DIR=" + dir, serveEnv + "=" + serveScript},
		Generate: func(*program.File, *ir.Program) (*external.Module, error) {
			return &external.Module{Format: "tfjs", Source: module, Functions: map[string]string{"f": "f", "g": "g"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	pr, err := e.Prepare(context.Background(), f, p)
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]*tensor.Tensor{"x": tensor.FromFloat32([]float32{1, 2, 3}, 3)}
	_, err = pr.Run(context.Background(), "f", in)
	if err == nil || !strings.Contains(err.Error(), "f left 1 TF.js tensors behind (tf.memory().numTensors") {
		t.Fatalf("a leaking call: %v", err)
	}
	out, err := pr.Run(context.Background(), "g", in)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Outputs["y"].F32; len(got) != 3 || got[0] != 2 || got[2] != 6 {
		t.Fatalf("g: %v", got)
	}
}
