package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/ledger"
	"github.com/rextio/rxeq/native/runtime"
)

// loadLedger reads --ledger: "" is the checked-in ledger (embedded, with
// its programs), "none" no ledger, anything else a file whose programs
// are relative to it. It returns the ledger and how to read an entry's
// program.
func loadLedger(flag string) (*ledger.Ledger, func(string) ([]byte, error), error) {
	switch flag {
	case "":
		return ledger.Default(), ledger.DefaultProgram, nil
	case "none":
		return nil, nil, nil
	}
	l, err := ledger.Load(flag)
	if err != nil {
		return nil, nil, err
	}
	dir := filepath.Dir(flag)
	return l, func(name string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ledger.ErrLedger, err)
		}
		return b, nil
	}, nil
}

var torchVersion = sync.OnceValue(func() string {
	in, err := runtime.FindTorch(os.Getenv(builtin.EnvTorchRoot))
	if err != nil {
		return ""
	}
	// "libtorch 1.13.1 (libtorch_cpu.so.1.13, …)"
	f := strings.Fields(in.Version)
	if len(f) < 2 {
		return ""
	}
	return f[1]
})

// frameworkOf names the framework and version behind a built-in executor
// (a fuzz.FrameworkFunc): libtorch's for torch, read from the library
// rxeq links; for the executors run by another framework, the version in
// what the prepared program reported (reported: "ONNX Runtime 1.30.0, …",
// "numpy 1.24.2, python 3.11.2, torch 1.13.0a0", "node 20.20.2,
// tfjs-backend-cpu 4.22.0, tfjs-core 4.22.0"), "" while nothing was
// reported (every version range of the ledger then holds); "" and "" for
// rxeq's own executors and for executors this build does not know (an
// external executor names itself).
func frameworkOf(name executor.Name, reported string) (string, string) {
	switch name {
	case executor.Torch:
		return "libtorch (ATen)", torchVersion()
	case executor.ONNXRuntime, executor.ONNXRuntimeNoOpt:
		return "ONNX Runtime", versionAfter(reported, "ONNX Runtime ")
	case executor.PyTorch, executor.TorchScript:
		return "PyTorch", versionAfter(reported, "torch ")
	case executor.NumPy:
		return "NumPy", versionAfter(reported, "numpy ")
	case executor.TFJSCPU, executor.TFJSWasm:
		return "TensorFlow.js", versionAfter(reported, "tfjs-core ")
	}
	return "", ""
}

// versionAfter returns the version that follows prefix in a framework
// description, at its start or after ", ": versionAfter("numpy 1.24.2,
// python 3.11.2, torch 1.13.0a0", "torch ") is "1.13.0a0"; "" when
// prefix is not there.
func versionAfter(reported, prefix string) string {
	for part := range strings.SplitSeq(reported, ", ") {
		if v, ok := strings.CutPrefix(part, prefix); ok {
			if f := strings.Fields(v); len(f) > 0 {
				return strings.TrimSuffix(f[0], ",")
			}
		}
	}
	return ""
}

// writeRepro writes a standalone reproducer of a new finding
// (fuzz.Campaign.Repro): for torch, repro.cc, a C++ program over
// libtorch alone (see fuzz.TorchRepro) when the reduced program is one
// that it can translate.
func writeRepro(dir string, rec *fuzz.Record, reduced []byte) (string, error) {
	if rec.Executor != string(executor.Torch) {
		return "", nil
	}
	src, err := fuzz.TorchRepro(reduced, rec)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "repro.cc"), src, 0o644); err != nil {
		return "", err
	}
	return "repro.cc", nil
}

// fuzzJSON is the --json output of rxeq fuzz (schema rxeq.fuzz/v1).
type fuzzJSON struct {
	Schema   string             `json:"schema"`
	Programs int                `json:"programs"`
	Findings int                `json:"findings"` // programs with a finding
	New      int                `json:"new"`
	XFail    int                `json:"xfail"`
	Elapsed  float64            `json:"elapsed_seconds"`
	Table    []fuzz.TableRow    `json:"table"`
	Records  []*fuzz.Record     `json:"distinct"`
	Ledger   []fuzz.LedgerCheck `json:"ledger"`
}

func writeFuzzJSON(path string, st fuzz.Stats, checks []fuzz.LedgerCheck) error {
	out := fuzzJSON{Schema: "rxeq.fuzz/v1", Programs: st.Programs, Findings: st.Findings, New: st.New(), XFail: st.XFail,
		Elapsed: st.Elapsed.Round(time.Millisecond).Seconds(), Table: fuzz.Table(st.Records), Records: st.Records, Ledger: checks}
	if out.Table == nil {
		out.Table = []fuzz.TableRow{}
	}
	if out.Records == nil {
		out.Records = []*fuzz.Record{}
	}
	if out.Ledger == nil {
		out.Ledger = []fuzz.LedgerCheck{}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
