// Package scenarios is rxeq's built-in catalog: .rx files embedded in the
// binary with go:embed, so `rxeq run` with no arguments and the project's
// own suites always have the same programs to run.
//
// The catalog holds:
//
//   - reference.rx (scenario reference-scoring): the reference scenario of
//     DESIGN.md — three scoring functions over 32 features and 8 classes at
//     batches 1, 16 and 128: score_linear (a linear scorer), score_mlp (a
//     two-layer perceptron) and score_pipeline (normalise, a 32-unit hidden
//     layer, four rounds routed through Relu or Tanh by the parity of
//     round_idx + phase with phase an int64 parameter, a class layer,
//     Softmax, Argmax). Each function has a four-round loop and a
//     checked-remainder if, and each is locked on both with //rx:lock lines
//     written against the C the native generator emits.
//   - rounds.rx (parameter-rounds): a loop whose bound is an int64
//     parameter (score_rounds), and one whose bound is an int64 local
//     that its body decrements (score_countdown: 7 trips, as Go reads the
//     count once, and the local ends at 0).
//   - edge.rx (edge-values): logits near ±1e4, rows of exact ties, zeros.
//   - tiles.rx (row-tiles): every row-separable shape of op at batches
//     above the native runtime's row tile (200 rows, which native-tiled
//     runs in tiles of 64, and 5000, which native tiles itself), and the
//     ops across the batch (along axis 0) that must never be tiled.
//   - error.rx (remainder-by-zero): a CheckedRem by zero that every
//     executor must fail with the same error (//rx:expect-error).
package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/rextio/rxeq/program"
)

//go:embed *.rx
var files embed.FS

// Dir is the directory name the catalog's files are reported under: a file
// is parsed as "scenarios/NAME.rx", so positions in error messages and
// generated C read like paths in the repository.
const Dir = "scenarios"

// Source is one embedded .rx file: its name ("scenarios/reference.rx") and
// its text.
type Source struct {
	Name string
	Text []byte
}

// Sources returns the raw catalog files: the reference scenario first (see
// catalogOrder), then the rest by name.
func Sources() []Source {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		// The embedded FS always has its root; this cannot happen.
		return nil
	}
	var out []Source
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".rx" {
			continue
		}
		text, err := fs.ReadFile(files, e.Name())
		if err != nil {
			continue
		}
		out = append(out, Source{Name: Dir + "/" + e.Name(), Text: text})
	}
	sort.Slice(out, func(i, j int) bool {
		ri, rj := catalogRank(out[i].Name), catalogRank(out[j].Name)
		if ri != rj {
			return ri < rj
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// catalogOrder puts the reference scenario first, then the others a
// reader meets in the README; files not listed follow, sorted by name.
var catalogOrder = []string{"reference.rx", "rounds.rx", "edge.rx", "error.rx"}

func catalogRank(name string) int {
	for i, n := range catalogOrder {
		if path.Base(name) == n {
			return i
		}
	}
	return len(catalogOrder)
}

// Names returns the file names of the catalog ("scenarios/edge.rx", …).
func Names() []string {
	var out []string
	for _, s := range Sources() {
		out = append(out, s.Name)
	}
	return out
}

// Catalog parses and checks every catalog file as a scenario
// (program.ParseScenario), in the order of Sources.
// The catalog is tested to check, so an error here means the binary was
// built from a broken tree; it is returned joined, naming every bad file.
func Catalog() ([]*program.File, error) {
	var out []*program.File
	var errs []error
	for _, s := range Sources() {
		f, err := program.ParseScenario(s.Name, s.Text)
		if err != nil {
			errs = append(errs, fmt.Errorf("catalog file %s: %w", s.Name, err))
			continue
		}
		out = append(out, f)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Lookup parses the catalog file whose scenario name (//rx:scenario) or
// file name (with or without directory and extension) is name.
func Lookup(name string) (*program.File, error) {
	fs, err := Catalog()
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		base := path.Base(f.Name)
		if f.Scenario == name || f.Name == name || base == name || base == name+".rx" {
			return f, nil
		}
	}
	return nil, fmt.Errorf("%w: no catalog scenario %q (have %v)", ErrNotFound, name, Names())
}

// ErrNotFound is the kind of the error Lookup returns for an unknown name.
var ErrNotFound = errors.New("scenario not found")
