package reports

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/tensor"
	"github.com/rextio/rxeq/tensor/npy"
)

// DumpSchema is the version tag of the dump manifest.
const DumpSchema = "rxeq.dump/v1"

// DumpCase is what WriteDump saves of one case.
type DumpCase struct {
	Name    string                               // e.g. "reference/score_linear/b16"
	Inputs  map[string]*tensor.Tensor            // by parameter name
	Outputs map[string]map[string]*tensor.Tensor // by executor, then output name
	Errors  map[string]string                    // by executor: the error it returned, if any
	// Files are other files to write into the case's directory, by file
	// name (made file-name safe), e.g. a repro.py.
	Files map[string][]byte
}

// Manifest is the manifest.json of a dump directory.
type Manifest struct {
	Schema string         `json:"schema"` // DumpSchema
	Cases  []ManifestCase `json:"cases"`
}

// ManifestCase lists the files of one case.
type ManifestCase struct {
	Name    string            `json:"name"`
	Dir     string            `json:"dir"` // relative to the dump directory, '/'-separated
	Inputs  []ManifestArray   `json:"inputs"`
	Outputs []ManifestArray   `json:"outputs"`
	Errors  map[string]string `json:"errors,omitempty"`
}

// ManifestArray describes one .npy file.
type ManifestArray struct {
	Executor string `json:"executor,omitempty"` // empty for inputs
	Name     string `json:"name"`
	Path     string `json:"path"`  // relative to the dump directory, '/'-separated
	DType    string `json:"dtype"` // "float32", "float64" or "int64"
	Descr    string `json:"descr"` // the NumPy dtype: "<f4", "<f8" or "<i8"
	Shape    []int  `json:"shape"`
}

// WriteDump writes each case's inputs and each executor's outputs under
// dir as .npy files (see npy.Write), with a manifest.json listing every
// file's case, executor, name, path, dtype and shape:
//
//	dir/manifest.json
//	dir/CASE/inputs/NAME.npy
//	dir/CASE/outputs/EXECUTOR/NAME.npy
//	dir/CASE/FILE                        (DumpCase.Files, e.g. repro_pytorch.py)
//
// CASE is the case name with each '/'-separated part made file-name safe
// (characters outside [A-Za-z0-9._-] become '_'); a case whose directory
// is already taken gets a "-2", "-3", … suffix. Names of inputs, outputs
// and executors are made safe the same way. Everything is written in
// sorted order, so the same cases give the same files. dir is created if
// needed; existing files are overwritten.
func WriteDump(dir string, cases []DumpCase) error {
	man := Manifest{Schema: DumpSchema, Cases: []ManifestCase{}}
	used := map[string]bool{}
	for _, c := range cases {
		base := safePath(c.Name)
		caseDir := base
		for k := 2; used[caseDir]; k++ {
			caseDir = fmt.Sprintf("%s-%d", base, k)
		}
		used[caseDir] = true
		mc := ManifestCase{Name: c.Name, Dir: caseDir, Inputs: []ManifestArray{}, Outputs: []ManifestArray{}}
		if len(c.Errors) > 0 {
			mc.Errors = maps.Clone(c.Errors)
		}
		for _, name := range slices.Sorted(maps.Keys(c.Inputs)) {
			a, err := dumpArray(dir, caseDir+"/inputs/"+safeName(name)+".npy", "", name, c.Inputs[name])
			if err != nil {
				return fmt.Errorf("reports: dump of case %s: input %s: %w", c.Name, name, err)
			}
			mc.Inputs = append(mc.Inputs, a)
		}
		for _, ex := range slices.Sorted(maps.Keys(c.Outputs)) {
			outs := c.Outputs[ex]
			for _, name := range slices.Sorted(maps.Keys(outs)) {
				a, err := dumpArray(dir, caseDir+"/outputs/"+safeName(ex)+"/"+safeName(name)+".npy", ex, name, outs[name])
				if err != nil {
					return fmt.Errorf("reports: dump of case %s: %s output %s: %w", c.Name, ex, name, err)
				}
				mc.Outputs = append(mc.Outputs, a)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(c.Files)) {
			path := filepath.Join(dir, filepath.FromSlash(caseDir), safeName(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return fmt.Errorf("reports: dump of case %s: %w", c.Name, err)
			}
			if err := os.WriteFile(path, c.Files[name], 0o644); err != nil {
				return fmt.Errorf("reports: dump of case %s: %w", c.Name, err)
			}
		}
		man.Cases = append(man.Cases, mc)
	}
	b, err := marshalIndent(&man, "")
	if err != nil {
		return fmt.Errorf("reports: dump manifest: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reports: dump: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
		return fmt.Errorf("reports: dump manifest: %w", err)
	}
	return nil
}

func dumpArray(dir, rel, executor, name string, t *tensor.Tensor) (ManifestArray, error) {
	var buf bytes.Buffer
	if err := npy.Write(&buf, t); err != nil {
		return ManifestArray{}, err
	}
	descr, _ := npy.Descr(t.DType)
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return ManifestArray{}, err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return ManifestArray{}, err
	}
	shape := append([]int{}, t.Shape...)
	return ManifestArray{Executor: executor, Name: name, Path: rel, DType: t.DType.String(), Descr: descr, Shape: shape}, nil
}

// safePath makes each '/'-separated part of a case name file-name safe.
func safePath(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = safeName(p)
	}
	return strings.Join(parts, "/")
}

// safeName is harness.SafeName: the inputs of a dump directory are found
// by the same rule when it is replayed (harness.Options.Inputs).
func safeName(s string) string { return harness.SafeName(s) }
