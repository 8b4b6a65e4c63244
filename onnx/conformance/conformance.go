// Package conformance holds rxeq's executors to ONNX's own expected
// outputs: the backend node tests that ONNX ships (Debian's
// libonnx-testdata installs them under DefaultRoot), each a model.onnx
// with input_N.pb and output_N.pb tensors per test_data_set_N.
//
// Every test is imported with onnx.Import; a test it refuses is counted
// under the class of the ImportError (and its op). Every imported test is
// run on each data set by every executor given, and each output is held
// to the expected one: int64 outputs exactly, float32 outputs within
// |got - want| <= ATol + RTol*|want| (ONNX's own backend tests' default
// tolerance), NaN where NaN and infinities equal.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/onnx/internal/onnxpb"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// DefaultRoot is where Debian's libonnx-testdata puts the node tests.
const DefaultRoot = "/usr/share/libonnx-testdata/data/node"

// The tolerance of float32 outputs: ONNX's backend test runner's defaults.
const (
	RTol = 1e-5
	ATol = 1e-7
)

// Find returns the directories under root that hold a model.onnx, sorted.
func Find(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, e.Name(), "model.onnx")); err == nil {
			out = append(out, filepath.Join(root, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// DataSet is one test_data_set_N: inputs and expected outputs by program
// name.
type DataSet struct {
	Name    string
	Inputs  map[string]*tensor.Tensor
	Outputs map[string]*tensor.Tensor
}

// Case is one node test, imported.
type Case struct {
	Name     string
	Imported *onnx.Imported
	File     *program.File
	Sets     []DataSet
}

// Load imports the test in dir and reads its data sets. An error of kind
// onnx.ErrImport means the test was not imported; any other is a broken
// test directory.
func Load(dir string) (*Case, error) {
	name := filepath.Base(dir)
	b, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return nil, err
	}
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	sort.Strings(sets)
	if len(sets) == 0 {
		return nil, fmt.Errorf("%s: no test_data_set_N directory", dir)
	}
	// The graph inputs, in order: the int64 tensors among them (axes,
	// shapes) are folded as constants when every data set gives them the
	// same value.
	m, err := onnxpb.UnmarshalModel(b)
	if err != nil {
		return nil, &onnx.ImportError{Class: onnx.ClassModel, Msg: err.Error()}
	}
	var inputs []string
	if m.Graph != nil {
		inits := map[string]bool{}
		for _, t := range m.Graph.Initializer {
			inits[t.Name] = true
		}
		for _, in := range m.Graph.Input {
			if !inits[in.Name] {
				inputs = append(inputs, in.Name)
			}
		}
	}
	consts := map[string]*tensor.Tensor{}
	for i, in := range inputs {
		var first *tensor.Tensor
		for _, s := range sets {
			t, err := readPB(filepath.Join(s, fmt.Sprintf("input_%d.pb", i)))
			if err != nil || t.DType != tensor.Int64 || t.Rank() == 0 || first != nil && !slices.Equal(t.I64, first.I64) {
				first = nil
				break
			}
			if first == nil {
				first = t
			}
		}
		if first != nil {
			consts[in] = first
		}
	}
	imp, err := onnx.Import(b, onnx.ImportOptions{Func: funcName(name), Source: name + "/model.onnx", Constants: consts})
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, in := range inputs {
		index[in] = i
	}
	f, err := program.ParseScenario(name+".rx", imp.Source)
	if err != nil {
		return nil, err
	}
	c := &Case{Name: name, Imported: imp, File: f}
	for _, s := range sets {
		ds := DataSet{Name: filepath.Base(s), Inputs: map[string]*tensor.Tensor{}, Outputs: map[string]*tensor.Tensor{}}
		for w, v := range imp.Weights {
			ds.Inputs[w] = v
		}
		for _, in := range imp.Inputs {
			t, err := readPB(filepath.Join(s, fmt.Sprintf("input_%d.pb", index[in.Model])))
			if err != nil {
				return nil, err
			}
			ds.Inputs[in.RX] = t
		}
		for i, out := range imp.Outputs {
			t, err := readPB(filepath.Join(s, fmt.Sprintf("output_%d.pb", i)))
			if err != nil {
				return nil, err
			}
			ds.Outputs[out.RX] = t
		}
		c.Sets = append(c.Sets, ds)
	}
	return c, nil
}

func funcName(test string) string {
	var b strings.Builder
	for _, r := range test {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func readPB(path string) (*tensor.Tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := onnx.ReadTensor(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Compare holds got to want: int64 exactly, float within the tolerance,
// NaN where NaN, infinities equal. It returns "" when they agree.
func Compare(name string, want, got *tensor.Tensor) string {
	if got == nil {
		return name + ": no output"
	}
	if fmt.Sprint(want.Shape) != fmt.Sprint(got.Shape) {
		return fmt.Sprintf("%s: shape %v, want %v", name, got.Shape, want.Shape)
	}
	if want.DType == tensor.Int64 {
		if got.DType != tensor.Int64 {
			return fmt.Sprintf("%s: %v, want int64", name, got.DType)
		}
		for i := range want.I64 {
			if want.I64[i] != got.I64[i] {
				return fmt.Sprintf("%s[%d]: %d, want %d", name, i, got.I64[i], want.I64[i])
			}
		}
		return ""
	}
	w, g := want.Float64s(), got.Float64s()
	for i := range w {
		switch {
		case math.IsNaN(w[i]) || math.IsNaN(g[i]):
			if math.IsNaN(w[i]) != math.IsNaN(g[i]) {
				return fmt.Sprintf("%s[%d]: %v, want %v", name, i, g[i], w[i])
			}
		case math.IsInf(w[i], 0) || math.IsInf(float64(float32(g[i])), 0):
			if w[i] != float64(float32(g[i])) {
				return fmt.Sprintf("%s[%d]: %v, want %v", name, i, g[i], w[i])
			}
		case math.Abs(g[i]-w[i]) > ATol+RTol*math.Abs(w[i]):
			return fmt.Sprintf("%s[%d]: %v, want %v (allowed %.1e)", name, i, g[i], w[i], ATol+RTol*math.Abs(w[i]))
		}
	}
	return ""
}

// Failure is one test an executor does not pass.
type Failure struct {
	Test, Executor, Message string
}

// Report is what Run found.
type Report struct {
	Found, Imported int
	// NotImported counts the tests Import refused, by class and op
	// ("op Pow", "shape ArgMax").
	NotImported map[string]int
	// Passed counts, per executor, the imported tests whose every data
	// set it computes within the tolerance.
	Passed   map[string]int
	Failures []Failure
	// Executors are the executors run, in order.
	Executors []string
	// MaxRel is, per executor, the greatest relative difference seen on
	// a float output (where |want| > ATol).
	MaxRel map[string]float64
}

// Run imports every node test under root and runs the imported ones
// through the executors.
func Run(ctx context.Context, root string, executors []executor.Executor) (*Report, error) {
	dirs, err := Find(root)
	if err != nil {
		return nil, err
	}
	r := &Report{Found: len(dirs), NotImported: map[string]int{}, Passed: map[string]int{}, MaxRel: map[string]float64{}}
	for _, e := range executors {
		r.Executors = append(r.Executors, string(e.Name()))
	}
	for _, dir := range dirs {
		c, err := Load(dir)
		var ie *onnx.ImportError
		switch {
		case errors.As(err, &ie):
			key := ie.Class
			if ie.Op != "" {
				key += " " + ie.Op
			}
			r.NotImported[key]++
			continue
		case err != nil:
			return nil, err
		}
		r.Imported++
		for _, e := range executors {
			msg := runCase(ctx, e, c, r)
			if msg == "" {
				r.Passed[string(e.Name())]++
			} else {
				r.Failures = append(r.Failures, Failure{Test: c.Name, Executor: string(e.Name()), Message: msg})
			}
		}
	}
	return r, nil
}

// runCase runs every data set of c through e; "" when all agree.
func runCase(ctx context.Context, e executor.Executor, c *Case, r *Report) string {
	p, err := program.Lower(c.File)
	if err != nil {
		return err.Error()
	}
	prep, err := e.Prepare(ctx, c.File, p)
	if err != nil {
		return "prepare: " + err.Error()
	}
	defer prep.Close()
	for _, ds := range c.Sets {
		out, err := prep.Run(ctx, c.Imported.Func, ds.Inputs)
		if err != nil {
			return ds.Name + ": " + err.Error()
		}
		for name, want := range ds.Outputs {
			if msg := Compare(name, want, out.Outputs[name]); msg != "" {
				return ds.Name + ": " + msg
			}
			if want.DType == tensor.Float32 && out.Outputs[name] != nil {
				w, g := want.Float64s(), out.Outputs[name].Float64s()
				for i := range w {
					if math.Abs(w[i]) > ATol && !math.IsInf(w[i], 0) && !math.IsNaN(w[i]) {
						rel := math.Abs(g[i]-w[i]) / math.Abs(w[i])
						r.MaxRel[string(e.Name())] = max(r.MaxRel[string(e.Name())], rel)
					}
				}
			}
		}
	}
	return ""
}

// Write prints the report as a table.
func (r *Report) Write(w io.Writer) {
	fmt.Fprintf(w, "ONNX node tests: %d found, %d imported, %d not imported\n", r.Found, r.Imported, r.Found-r.Imported)
	for _, e := range r.Executors {
		fmt.Fprintf(w, "  %-18s %d / %d agree (greatest relative difference %.1e)\n", e, r.Passed[e], r.Imported, r.MaxRel[e])
	}
	keys := make([]string, 0, len(r.NotImported))
	for k := range r.NotImported {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if r.NotImported[keys[i]] != r.NotImported[keys[j]] {
			return r.NotImported[keys[i]] > r.NotImported[keys[j]]
		}
		return keys[i] < keys[j]
	})
	fmt.Fprintln(w, "not imported, by reason (class and op):")
	for _, k := range keys {
		fmt.Fprintf(w, "  %4d  %s\n", r.NotImported[k], k)
	}
	for _, f := range r.Failures {
		fmt.Fprintf(w, "FAIL %s (%s): %s\n", f.Test, f.Executor, f.Message)
	}
}
