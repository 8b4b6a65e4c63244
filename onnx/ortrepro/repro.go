// Package ortrepro writes the standalone reproducer, repro.py, of a case
// of the ONNX Runtime executors (onnxruntime, onnxruntime-noopt).
//
// ONNX Runtime has no Python binding where rxeq runs it (only the C
// library of npm's onnxruntime-node), so the script drives ONNX Runtime's
// C API through ctypes: OrtGetApiBase, GetApi(17), and the OrtApi table of
// function pointers at the positions rxeq's own binding uses (onnx/ort's
// capi.h, which checks them against the upstream header). It needs only
// python3, NumPy and libonnxruntime.so.1; it does not import rxeq.
//
// The script holds the function's ONNX model as rxeq exports it (base64),
// the inputs as exact float32 and int64 bits, and a float64 reference
// independent of ONNX Runtime: the function exported as NumPy in float64
// (pyexport, as the Python executors' reproducers use), whose
// np.maximum, np.minimum and np.max follow rxeq's contract for zeros of
// both signs (NumPy's return the first operand of two zeros). ONNX Runtime
// runs in a child process (the script run again), so that a crash of it
// reports as a reproduced discrepancy instead of ending the script; the
// child runs with glibc's MALLOC_PERTURB_, so that a read of uninitialised
// memory by ONNX Runtime comes out the same on every run.
package ortrepro

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/internal/repro"
	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/pyexport"
	"github.com/rextio/rxeq/tensor"
)

// ErrRepro is wrapped by the errors of Repro.
var ErrRepro = errors.New("ONNX Runtime reproducer")

// Options describe a reproducer: the executor (onnxruntime or
// onnxruntime-noopt), the function, the inputs of the failing case and
// the comparison's settings.
type Options struct {
	repro.Options
	// Tolerances, when not nil, are the tolerances of the float outputs by
	// result name, as the case was judged (harness.Case.Tolerances,
	// compare.Tolerances): RTol and ATol, a ULP bound (UseULP, NoAbsRel)
	// and signed zeros. An output without one is compared with
	// Options.RTol and Options.ATol.
	Tolerances map[string]compare.Tolerance
	// SignedZeros compares the sign of zeros in every float output, as
	// rxeq's signed-zero comparison (compare.Tolerance.SignedZeros) does:
	// +0 against -0 is a mismatch.
	SignedZeros bool
	// Attempts is how many times the script runs ONNX Runtime, each time
	// in a new process, before it concludes that the discrepancy does not
	// reproduce (0: once). A crash that does not come every time wants a
	// few: the child's MALLOC_PERTURB_ makes a read of uninitialised
	// memory repeatable (the seed-72 session crash of docs/onnx.md comes
	// in every run), not every crash.
	Attempts int
}

// IsExecutor reports whether Repro writes reproducers for executor e.
func IsExecutor(e executor.Name) bool {
	return e == executor.ONNXRuntime || e == executor.ONNXRuntimeNoOpt
}

// Repro writes repro.py for one case of executor opts.Executor on function
// opts.Func of p. The script creates an ONNX Runtime session of the model
// with the executor's settings (one intra-op and one inter-op thread,
// sequential execution, no spinning; graph optimization ORT_ENABLE_ALL for
// onnxruntime, ORT_DISABLE_ALL for onnxruntime-noopt), runs it on the
// inputs, computes the float64 reference, prints ONNX Runtime's version
// and expected against got at the first mismatching indices (with their
// bit patterns), and exits 1 while the discrepancy reproduces, 0 when it
// does not, and 2 when it cannot run (no library at $RXEQ_ORT_LIB or where
// ci/setup.sh installs it, no NumPy).
//
// The comparison is rxeq's (compare.Outputs): float outputs within
// |got - want| <= ATol + RTol*|want| and, with a ULP bound, within that
// many units in the last place of want rounded to float32 (with NoAbsRel
// the ULP bound alone), NaN against NaN, ±Inf against the same infinity,
// zeros by sign under SignedZeros; int64 outputs exactly (the near-tie rule for
// classes is not applied). A checked-arithmetic error comes out of the
// model in its error output (onnx.ErrorOutput) and is turned into rxeq's
// text, compared with the reference's by text; a failing ONNX Runtime
// call, or a death of its process by a signal, reproduces.
func Repro(p *ir.Program, opts Options) ([]byte, error) {
	if !IsExecutor(opts.Executor) {
		return nil, fmt.Errorf("%w: no reproducer for executor %q (want onnxruntime or onnxruntime-noopt)", ErrRepro, opts.Executor)
	}
	f, ro, err := repro.Prepare(p, opts.Options, ErrRepro)
	if err != nil {
		return nil, err
	}
	opts.Options = ro
	inputs, err := repro.Inputs(f, opts.Options, ErrRepro)
	if err != nil {
		return nil, err
	}
	env, err := ir.BindInputs(f.Name, f.ParamList(), opts.Inputs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRepro, err)
	}
	sig, err := onnx.Describe(p, f.Name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRepro, err)
	}
	model, err := onnx.Export(p, f.Name, onnx.Meta{Source: opts.Source, Version: opts.Version})
	if err != nil {
		return nil, fmt.Errorf("%w: exporting %s to ONNX: %w", ErrRepro, f.Name, err)
	}
	ref, err := pyexport.Export(p, pyexport.Options{Format: pyexport.NumPy, Funcs: []string{f.Name}, Source: opts.Source, Version: opts.Version, Float64: true})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRepro, err)
	}
	level, levelName := 99, "ORT_ENABLE_ALL"
	if opts.Executor == executor.ONNXRuntimeNoOpt {
		level, levelName = 0, "ORT_DISABLE_ALL"
	}

	var b strings.Builder
	b.WriteString("#!/usr/bin/env python3\n")
	b.WriteString("# " + repro.Byline(opts.Options, pyexport.CommentText) + " (ONNX Runtime " + ort.Version + ", " + levelName + "),\n")
	b.WriteString("# against a float64 NumPy reference of the same function. It needs only python3, NumPy and\n")
	b.WriteString("# ONNX Runtime's C library, driven through ctypes. Exit status 1: the discrepancy reproduces;\n")
	b.WriteString("# 0: it does not; 2: it cannot run here.\n")
	b.WriteString("# Usage: RXEQ_ORT_LIB=/path/to/" + ort.LibraryName + " python3 repro.py   (without RXEQ_ORT_LIB:\n")
	b.WriteString("# $XDG_CACHE_HOME/rxeq/ort/" + ort.Version + "/" + ort.LibraryName + ", else ~/.cache/..., where rxeq's ci/setup.sh installs it)\n\n")
	b.WriteString("import base64\nimport ctypes\nimport os\nimport pickle\nimport signal\nimport subprocess\nimport sys\n\ntry:\n    import numpy as np\nexcept ImportError as e:\n    print(\"cannot run: NumPy is missing:\", e, file=sys.stderr)\n    sys.exit(2)\n")
	b.WriteString("\n# ---- the ONNX model rxeq exported (rxeq export --format onnx) " + strings.Repeat("-", 14) + "\n\n")
	b.WriteString("MODEL = base64.b64decode(\n")
	enc := base64.StdEncoding.EncodeToString(model)
	for len(enc) > 0 {
		n := min(len(enc), 88)
		fmt.Fprintf(&b, "    %q\n", enc[:n])
		enc = enc[n:]
	}
	b.WriteString(")\n")
	b.WriteString("\n# ---- the float64 NumPy reference, in its own namespace " + strings.Repeat("-", 20) + "\n\n")
	b.WriteString("REFERENCE_SOURCE = '''" + tripleQuoted(repro.StripHeader(string(ref.Source), "#")) + "'''\n")
	fmt.Fprintf(&b, "REFERENCE_FUNCTION = %s\n", pyString(ref.Names[f.Name]))
	b.WriteString("\n# ---- the inputs, bit for bit " + strings.Repeat("-", 46) + "\n\n")
	b.WriteString("INPUTS = [  # (rxeq name, model input, dtype, shape, little-endian bytes)\n")
	for i, port := range sig.Inputs {
		t := inputs[i]
		fmt.Fprintf(&b, "    (%s, %s, %s, %s, base64.b64decode(%q)),\n", pyString(port.Value.Name), pyString(port.Name),
			pyString(dtypeOf(t.DType)), tuple(repro.Dims(t)), base64.StdEncoding.EncodeToString(repro.LittleEndian(t)))
	}
	b.WriteString("]\n")
	b.WriteString("OUTPUTS = [  # (rxeq name, model output, dtype, shape)\n")
	for _, port := range sig.Outputs {
		shape := ir.Concrete(port.Value.Type.Shape, env)
		dims := make([]string, len(shape))
		for i, d := range shape {
			dims[i] = strconv.Itoa(d)
		}
		dt := tensor.Float32
		if port.Value.Type.DType == ir.Int64 {
			dt = tensor.Int64
		}
		fmt.Fprintf(&b, "    (%s, %s, %s, %s),\n", pyString(port.Value.Name), pyString(port.Name), pyString(dtypeOf(dt)), tuple(dims))
	}
	b.WriteString("]\n")
	b.WriteString("TOLERANCES = {  # float output: (rtol, atol, ULP bound or None, |got - want| test on, zero signs compared)\n")
	for _, port := range sig.Outputs {
		if port.Value.Type.DType != ir.Float32 {
			continue
		}
		t, ok := opts.Tolerances[port.Value.Name]
		if !ok {
			t = compare.Tolerance{RTol: opts.RTol, ATol: opts.ATol}
		}
		ulp := "None"
		if t.UseULP {
			ulp = strconv.FormatInt(t.ULP, 10)
		}
		fmt.Fprintf(&b, "    %s: (%s, %s, %s, %s, %s),\n", pyString(port.Value.Name), floatText(t.RTol), floatText(t.ATol), ulp,
			pyBool(!(t.UseULP && t.NoAbsRel)), pyBool(t.SignedZeros || opts.SignedZeros))
	}
	b.WriteString("}\n")
	if sig.Error != "" {
		fmt.Fprintf(&b, "ERROR_OUTPUT = %s  # int64 [3]: (checked operation, dividend, divisor), 0 when none failed\n", pyString(sig.Error))
	} else {
		b.WriteString("ERROR_OUTPUT = None  # the function has no checked arithmetic that can fail\n")
	}
	b.WriteString("SITES = [  # the checked operations, numbered from 1: (function, builtin, dividend's text, position)\n")
	for _, s := range sig.Sites {
		if s == nil {
			b.WriteString("    None,\n")
			continue
		}
		fmt.Fprintf(&b, "    (%s, %s, %s, %s),\n", pyString(s.Func), pyString(s.Builtin), pyString(s.LHS), pyString(s.Pos))
	}
	b.WriteString("]\n")
	fmt.Fprintf(&b, "EXECUTOR = %s\n", pyString(string(opts.Executor)))
	fmt.Fprintf(&b, "OPT_LEVEL = %d  # %s\n", level, levelName)
	fmt.Fprintf(&b, "ORT_VERSION = %s  # the release rxeq is tested with\n", pyString(ort.Version))
	fmt.Fprintf(&b, "ORT_LIBRARY = %s\n", pyString(ort.LibraryName))
	fmt.Fprintf(&b, "API_VERSION = %d\n", 17)
	fmt.Fprintf(&b, "ATTEMPTS = %d\n", max(opts.Attempts, 1))
	b.WriteString(reproMain)
	return []byte(b.String()), nil
}

func dtypeOf(d tensor.DType) string {
	if d == tensor.Int64 {
		return "<i8"
	}
	return "<f4"
}

// tuple writes dims as a Python tuple.
func tuple(dims []string) string {
	if len(dims) == 1 {
		return "(" + dims[0] + ",)"
	}
	return "(" + strings.Join(dims, ", ") + ")"
}

func pyBool(v bool) string {
	if v {
		return "True"
	}
	return "False"
}

func floatText(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// pyString returns s as a Python string literal of printable ASCII
// (strconv.QuoteToASCII's escapes, \x, \u, \U and the C ones, are
// Python's too).
func pyString(s string) string { return strconv.QuoteToASCII(s) }

// tripleQuoted escapes s for a triple-quoted Python literal: backslashes
// and quotes.
func tripleQuoted(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, `'`, `\'`)
}
