package harness

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
	"github.com/rextio/rxeq/tensor/npy"
)

// ErrInputs is the kind of every error about a file under Options.Inputs:
// missing, unreadable, corrupt or truncated, Fortran order, big-endian
// data, the wrong dtype or a shape that disagrees with the declared one.
// Such an error also wraps ErrOptions: Run returns it before any case
// runs, so nothing is lost, and `rxeq run` exits 2.
var ErrInputs = errors.New("bad input file")

// inputError is an ErrInputs error; it wraps ErrOptions and the cause.
type inputError struct {
	msg   string
	cause error
}

func (e *inputError) Error() string { return e.msg }

func (e *inputError) Unwrap() []error {
	if e.cause != nil {
		return []error{ErrInputs, ErrOptions, e.cause}
	}
	return []error{ErrInputs, ErrOptions}
}

func inputErr(cause error, format string, args ...any) error {
	return &inputError{msg: "inputs: " + fmt.Sprintf(format, args...), cause: cause}
}

// SafeName maps a scenario, function, parameter or executor name to the
// file name it has in a dump or inputs directory: every character outside
// [A-Za-z0-9._-] becomes '_', and "", "." and ".." become underscores.
func SafeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '.' || c == '-' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	out := string(b)
	if out == "" || out == "." || out == ".." {
		out = strings.Repeat("_", max(1, len(out)))
	}
	return out
}

// InputSearchPaths returns, in order, the files Run looks at for the input
// param of function fn of scenario under Options.Inputs dir (names made
// file-name safe with SafeName):
//
//	DIR/SCENARIO/FUNCTION/bN/inputs/PARAM.npy   (a --dump directory, one group per bN)
//	DIR/SCENARIO/FUNCTION/PARAM.npy
//	DIR/FUNCTION/PARAM.npy
//	DIR/PARAM.npy
//
// batchDir is "bN" for the first line and "" to leave it out. The first
// file that exists is read.
func InputSearchPaths(dir, scenario, fn, batchDir, param string) []string {
	s, f, p := SafeName(scenario), SafeName(fn), SafeName(param)+".npy"
	var out []string
	if batchDir != "" {
		out = append(out, filepath.Join(dir, s, f, batchDir, "inputs", p))
	}
	return append(out, filepath.Join(dir, s, f, p), filepath.Join(dir, f, p), filepath.Join(dir, p))
}

// Replay says where the inputs of one group came from when Options.Inputs
// is set: the .npy file of each parameter that has one, and the parameters
// generated from their //rx:input because no file was found.
type Replay struct {
	Scenario  string
	Function  string
	Batch     int
	Files     map[string]string // parameter -> the .npy file it was read from
	Generated []string          // parameters without a file, in declaration order
}

// String prints the replay on one line, e.g.
// "inputs of s/f/b16: x from in/f/x.npy; generated from //rx:input: b".
func (r Replay) String() string {
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(r.Files)) {
		parts = append(parts, p+" from "+r.Files[p])
	}
	s := fmt.Sprintf("inputs of %s/%s/b%d: ", r.Scenario, r.Function, r.Batch)
	if len(parts) == 0 {
		s += "no file"
	} else {
		s += strings.Join(parts, ", ")
	}
	if len(r.Generated) > 0 {
		s += "; generated from //rx:input: " + strings.Join(r.Generated, ", ")
	}
	return s
}

// InputGroups reads and checks the files of function fn of f under
// Options.Inputs dir as Run does (dims are Options.Dims, and the errors
// are Run's) and returns one Replay per group of data: its batch (0 when
// no file fixes it; the function then runs at its //rx:batches with these
// files), the files and the generated parameters. It returns none when no
// parameter of fn has a file.
func InputGroups(dir string, f *program.File, fn *program.Func, dims map[string]int) ([]Replay, error) {
	sets, err := loadReplays(dir, f, fn, dims)
	if err != nil {
		return nil, err
	}
	var out []Replay
	for _, s := range sets {
		out = append(out, Replay{Scenario: f.ScenarioName(), Function: fn.Name, Batch: s.batch,
			Files: maps.Clone(s.files), Generated: slices.Clone(s.generated)})
	}
	return out, nil
}

// replaySet is the data of one group read from Options.Inputs.
type replaySet struct {
	batch     int // 0: no file fixes the batch; run at the scenario's batches
	dims      map[string]int
	shapes    map[string][]int // parameter -> its file's shape (read when the group runs)
	files     map[string]string
	generated []string
}

var batchDirRE = regexp.MustCompile(`^b([0-9]+)$`)

// loadReplays reads the input files of fn (see InputSearchPaths): one set
// per bN/inputs directory of a dump, or else one set; none when no
// parameter has a file. dims are Options.Dims.
func loadReplays(dir string, f *program.File, fn *program.Func, dims map[string]int) ([]*replaySet, error) {
	scenario := f.ScenarioName()
	base := filepath.Join(dir, SafeName(scenario), SafeName(fn.Name))
	entries, err := os.ReadDir(base)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, inputErr(err, "%s: %v", base, err)
	}
	type batchDir struct {
		name string
		n    int
	}
	var dumps []batchDir
	for _, e := range entries {
		m := batchDirRE.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		if st, err := os.Stat(filepath.Join(base, e.Name(), "inputs")); err != nil || !st.IsDir() {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil || n < 1 || n > MaxBatch {
			return nil, inputErr(nil, "%s: a batch directory needs a batch size from 1 to %d (the limit of //rx:batches), like b16", filepath.Join(base, e.Name()), MaxBatch)
		}
		dumps = append(dumps, batchDir{e.Name(), n})
	}
	slices.SortFunc(dumps, func(a, b batchDir) int { return cmp.Or(a.n-b.n, strings.Compare(a.name, b.name)) })
	for i := 1; i < len(dumps); i++ {
		if dumps[i].n == dumps[i-1].n {
			// One case name for both: a dump, a replay and the report could
			// not tell their data apart.
			return nil, inputErr(nil, "%s and %s are both batch %d; keep one of them", filepath.Join(base, dumps[i-1].name), filepath.Join(base, dumps[i].name), dumps[i].n)
		}
	}
	if len(dumps) == 0 {
		s, err := loadReplay(dir, scenario, fn, "", 0, dims)
		if err != nil || s == nil {
			return nil, err
		}
		return []*replaySet{s}, nil
	}
	var out []*replaySet
	for _, d := range dumps {
		s, err := loadReplay(dir, scenario, fn, d.name, d.n, dims)
		if err != nil {
			return nil, err
		}
		if s != nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// loadReplay reads the files of one group; nil when no parameter has one.
// batch, when not 0, is the bN of the directory and binds the batch symbol.
func loadReplay(dir, scenario string, fn *program.Func, batchDir string, batch int, dims map[string]int) (*replaySet, error) {
	batchSym := BatchSymbol(fn)
	s := &replaySet{dims: map[string]int{}, shapes: map[string][]int{}, files: map[string]string{}}
	boundBy := map[string]string{}
	for sym, v := range dims {
		s.dims[sym], boundBy[sym] = v, "Options.Dims"
	}
	if batch > 0 && batchSym != "" {
		s.dims[batchSym], boundBy[batchSym] = batch, "the directory "+batchDir
	}
	var errs []error // every bad file, not just the first
	for _, p := range fn.Params {
		path, err := findInput(InputSearchPaths(dir, scenario, fn.Name, batchDir, p.Name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if path == "" {
			s.generated = append(s.generated, p.Name)
			continue
		}
		shape, err := statInput(path, fn, p)
		if err == nil {
			err = bindShape(path, fn, p, shape, batchSym, s.dims, boundBy)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.shapes[p.Name], s.files[p.Name] = shape, path
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(s.files) == 0 {
		return nil, nil
	}
	s.batch = batch
	if v, ok := s.dims[batchSym]; ok && batchSym != "" {
		s.batch = v
	}
	if s.batch > MaxBatch {
		return nil, inputErr(nil, "%s: the files give batch %d (%s = %d, from %s); at most %d, the limit of //rx:batches",
			fn.Name, s.batch, batchSym, s.batch, boundBy[batchSym], MaxBatch)
	}
	for _, p := range fn.Params {
		if _, ok := s.files[p.Name]; ok {
			continue
		}
		for _, d := range p.Type.Shape {
			if d.IsSym() && d.Sym != batchSym {
				if _, ok := s.dims[d.Sym]; !ok {
					return nil, inputErr(nil, "%s: parameter %s has no file (looked for %s) and its dimension %s is bound by no other file; add %s.npy",
						fn.Name, p.Name, strings.Join(InputSearchPaths(dir, scenario, fn.Name, batchDir, p.Name), ", "), d.Sym, p.Name)
				}
			}
		}
	}
	return s, nil
}

// read reads the set's files (when its group runs).
func (s *replaySet) read() (map[string]*tensor.Tensor, error) {
	out := make(map[string]*tensor.Tensor, len(s.files))
	for name, path := range s.files {
		t, err := readInput(path, s.shapes[name])
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// findInput returns the first of paths that exists ("" when none does).
func findInput(paths []string) (string, error) {
	for _, path := range paths {
		st, err := os.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return "", inputErr(err, "%s: %v", path, err)
		case st.IsDir():
			return "", inputErr(nil, "%s is a directory; an input is one .npy file", path)
		}
		return path, nil
	}
	return "", nil
}

// statInput reads the header of one input file (npy.StatFile: a regular
// file whose size matches its header; no data is read) and checks its
// dtype against the parameter's. It returns the file's shape.
func statInput(path string, fn *program.Func, p *program.Var) ([]int, error) {
	h, err := npy.StatFile(path)
	if err != nil {
		fix := "write it again with np.save(path, a)"
		switch {
		case errors.Is(err, npy.ErrNotRegular):
			fix = "give a regular .npy file"
		case errors.Is(err, npy.ErrUnsupported):
			fix = "convert it as said"
		}
		msg := strings.TrimPrefix(err.Error(), path+": ")
		return nil, inputErr(err, "%s (parameter %s of %s): %s; %s", path, p.Name, fn.Name, msg, fix)
	}
	dt := map[string]tensor.DType{"<f4": tensor.Float32, "<f8": tensor.Float64, "<i8": tensor.Int64}[h.Descr]
	switch {
	case p.Type.DType == ir.Int64 && (dt != tensor.Int64 || len(h.Shape) != 0):
		return nil, inputErr(nil, "%s: parameter %s of %s is an int64 scalar, the file holds %s %s; save it with np.save(path, np.int64(v))",
			path, p.Name, fn.Name, dt, npy.ShapeTuple(h.Shape))
	case p.Type.DType == ir.Float32 && dt != tensor.Float32:
		return nil, inputErr(nil, "%s: parameter %s of %s is float32, the file holds %s; convert it with np.save(path, a.astype(np.float32))",
			path, p.Name, fn.Name, dt)
	}
	return h.Shape, nil
}

// readInput reads the data of one input file when its group runs, and
// checks that it is still what statInput saw (shape).
func readInput(path string, shape []int) (*tensor.Tensor, error) {
	t, err := npy.ReadFile(path)
	if err != nil {
		return nil, inputErr(err, "%v", err)
	}
	if !slices.Equal(t.Shape, shape) {
		return nil, inputErr(nil, "%s: the file changed during the run: its shape is %s, it was %s", path, npy.ShapeTuple(t.Shape), npy.ShapeTuple(shape))
	}
	return t, nil
}

// bindShape checks the shape of t against the declared shape of p: the
// rank, every fixed dimension, and every symbolic one against the value
// already bound (by another file, the bN directory or Options.Dims), which
// it binds otherwise.
func bindShape(path string, fn *program.Func, p *program.Var, shape []int, batchSym string, dims map[string]int, boundBy map[string]string) error {
	if len(shape) != p.Type.Rank() {
		return inputErr(nil, "%s: parameter %s of %s is declared %s (rank %d), the file has shape %s (rank %d)",
			path, p.Name, fn.Name, p.Type, p.Type.Rank(), npy.ShapeTuple(shape), len(shape))
	}
	for i, d := range p.Type.Shape {
		got := shape[i]
		switch {
		case !d.IsSym():
			if got != int(d.Size) {
				return inputErr(nil, "%s: parameter %s of %s is declared %s, the file has shape %s: dimension %d is %d, not %d",
					path, p.Name, fn.Name, p.Type, npy.ShapeTuple(shape), i, got, d.Size)
			}
		case d.Sym == batchSym && got < 1:
			return inputErr(nil, "%s: parameter %s of %s: the batch dimension %s is %d; a batch needs at least one row",
				path, p.Name, fn.Name, d.Sym, got)
		default:
			if v, ok := dims[d.Sym]; ok && v != got {
				return inputErr(nil, "%s: parameter %s of %s has shape %s: dimension %d (%s) is %d, but %s has %s = %d; all of a group's files must agree",
					path, p.Name, fn.Name, npy.ShapeTuple(shape), i, d.Sym, got, boundBy[d.Sym], d.Sym, v)
			}
			if _, ok := dims[d.Sym]; !ok {
				dims[d.Sym], boundBy[d.Sym] = got, path
			}
		}
	}
	return nil
}
