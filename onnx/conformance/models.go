package conformance

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/onnx/internal/onnxpb"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/tensor"
)

// ModelReport is what RunModels found: ONNX Runtime run on ONNX's own
// models, not on rxeq's import and export of them.
type ModelReport struct {
	// Executor names the runtime and level ("onnxruntime",
	// "onnxruntime-noopt").
	Executor string
	// Found is the number of tests; Runnable those whose inputs and
	// outputs are all float32 or int64 tensors (the ones rxeq's binding
	// passes); Agree those whose every data set agrees within the
	// tolerance of Compare.
	Found, Runnable, Agree int
	// Disagree lists the runnable tests that do not agree: ONNX Runtime
	// refused the model, failed a run, or computed something else.
	Disagree []Failure
}

// RunModels runs every node test under root whose tensors are float32
// and int64 through ONNX Runtime directly (a session of the test's own
// model.onnx at level, inputs by the graph's input names) and holds each
// output to the expected one with Compare. It tells what ONNX Runtime
// computes on ONNX's models, including the ops rxeq cannot import; its
// disagreements are ONNX Runtime's (or the test data's), not rxeq's.
// ONNX Runtime runs in this process.
func RunModels(ctx context.Context, root string, lib *ort.Library, level ort.Level, name string) (*ModelReport, error) {
	dirs, err := Find(root)
	if err != nil {
		return nil, err
	}
	r := &ModelReport{Executor: name, Found: len(dirs)}
	for _, dir := range dirs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t, err := loadModel(dir)
		if err != nil {
			return nil, err
		}
		if t == nil {
			continue
		}
		r.Runnable++
		if msg := t.run(ctx, lib, level); msg != "" {
			r.Disagree = append(r.Disagree, Failure{Test: filepath.Base(dir), Executor: name, Message: msg})
		} else {
			r.Agree++
		}
	}
	return r, nil
}

// modelTest is one node test as ONNX Runtime takes it.
type modelTest struct {
	model     []byte
	ins, outs []string
	sets      []modelSet
}

type modelSet struct {
	name     string
	in, want []*tensor.Tensor
}

// loadModel reads the test in dir, or returns nil when it has a tensor
// that is neither float32 nor int64 (or a model that does not decode).
func loadModel(dir string) (*modelTest, error) {
	b, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return nil, err
	}
	m, err := onnxpb.UnmarshalModel(b)
	if err != nil || m.Graph == nil {
		return nil, nil
	}
	t := &modelTest{model: b}
	inits := map[string]bool{}
	for _, x := range m.Graph.Initializer {
		inits[x.Name] = true
	}
	for _, in := range m.Graph.Input {
		if !inits[in.Name] {
			t.ins = append(t.ins, in.Name)
		}
	}
	for _, o := range m.Graph.Output {
		t.outs = append(t.outs, o.Name)
	}
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	sort.Strings(sets)
	read := func(path string) *tensor.Tensor {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		x, err := onnx.ReadTensor(b)
		if err != nil || x.DType != tensor.Float32 && x.DType != tensor.Int64 {
			return nil
		}
		return x
	}
	for _, s := range sets {
		ds := modelSet{name: filepath.Base(s)}
		for i := range t.ins {
			x := read(filepath.Join(s, fmt.Sprintf("input_%d.pb", i)))
			if x == nil {
				return nil, nil
			}
			ds.in = append(ds.in, x)
		}
		for i := range t.outs {
			x := read(filepath.Join(s, fmt.Sprintf("output_%d.pb", i)))
			if x == nil {
				return nil, nil
			}
			ds.want = append(ds.want, x)
		}
		t.sets = append(t.sets, ds)
	}
	if len(t.sets) == 0 {
		return nil, nil
	}
	return t, nil
}

// run runs every data set; "" when all agree.
func (t *modelTest) run(ctx context.Context, lib *ort.Library, level ort.Level) string {
	s, err := lib.NewSession(t.model, t.ins, t.outs, ort.SessionOptions{Level: level})
	if err != nil {
		return err.Error()
	}
	defer s.Close()
	for _, ds := range t.sets {
		got := make([]*tensor.Tensor, len(ds.want))
		for i, w := range ds.want {
			if w.DType == tensor.Int64 {
				got[i] = tensor.NewInt64(w.Shape...)
			} else {
				got[i] = tensor.NewFloat32(w.Shape...)
			}
		}
		if err := s.Run(ctx, ds.in, got); err != nil {
			return ds.name + ": " + err.Error()
		}
		for i, w := range ds.want {
			if msg := Compare(t.outs[i], w, got[i]); msg != "" {
				return ds.name + ": " + msg
			}
		}
	}
	return ""
}

// Write prints the report: the counts, and a line per disagreement.
func (r *ModelReport) Write(w io.Writer) {
	fmt.Fprintf(w, "%s on ONNX's own models: %d found, %d runnable (float32 and int64 tensors), %d / %d agree\n",
		r.Executor, r.Found, r.Runnable, r.Agree, r.Runnable)
	for _, f := range r.Disagree {
		fmt.Fprintf(w, "  differs: %s (%s, ONNX's model): %.300s\n", f.Test, f.Executor, f.Message)
	}
}
