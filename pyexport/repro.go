package pyexport

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/rextio/rxeq/internal/repro"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// ReproOptions describe a reproducer: which executor (pytorch,
// torchscript or numpy) and function, and the inputs of the failing case.
type ReproOptions = repro.Options

// Repro writes a standalone script, repro.py, that reproduces one case
// of the executor opts.Executor: it holds the function exported for the
// framework, the same function exported as NumPy in float64 (the
// reference), and the inputs as exact float32 bits (base64 of their
// little-endian bytes). It runs the framework's function (eagerly,
// through torch.jit.script, or with NumPy), computes the float64
// reference, prints the framework's version and expected against got at
// the first mismatching indices, and exits 1 while the discrepancy
// reproduces, 0 when it does not. It needs only the framework and NumPy;
// it does not import rxeq.
//
// Float outputs are compared with the tolerance; NaN must meet NaN and
// ±Inf the same infinity; int64 outputs must be equal (rxeq's near-tie
// rule for classes is not applied: a near-tie in the reference shows as a
// mismatch of the classes with the scores printed beside it). An error
// is compared by its text.
func Repro(p *ir.Program, opts ReproOptions) ([]byte, error) {
	format, ok := FormatOf(opts.Executor)
	if !ok {
		return nil, fmt.Errorf("%w: no reproducer for executor %q (want pytorch, torchscript or numpy)", ErrExport, opts.Executor)
	}
	f, opts, err := repro.Prepare(p, opts, ErrExport)
	if err != nil {
		return nil, err
	}
	fw, err := Export(p, Options{Format: format, Funcs: []string{opts.Func}, Source: opts.Source, Version: opts.Version})
	if err != nil {
		return nil, err
	}
	ref, err := Export(p, Options{Format: NumPy, Funcs: []string{opts.Func}, Source: opts.Source, Version: opts.Version, Float64: true})
	if err != nil {
		return nil, err
	}
	inputs, err := repro.Inputs(f, opts, ErrExport)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("#!/usr/bin/env python3\n")
	b.WriteString("# " + repro.Byline(opts, CommentText) + ",\n")
	b.WriteString("# against a float64 NumPy reference of the same function. It needs only the\n")
	b.WriteString("# framework and NumPy. Exit status 1: the discrepancy reproduces; 0: it does not.\n")
	b.WriteString("# Usage: python3 repro.py\n\n")
	b.WriteString("import base64\nimport sys\n\nimport numpy as np\n")
	b.WriteString("\n# ---- the function as rxeq exported it for the framework " + strings.Repeat("-", 20) + "\n\n")
	// The framework's module, minus its own header comment and imports
	// of numpy (already imported).
	b.WriteString(repro.StripHeader(string(fw.Source), "#"))
	b.WriteString("\n\n# ---- the float64 NumPy reference, in its own namespace " + strings.Repeat("-", 20) + "\n\n")
	b.WriteString("REFERENCE_SOURCE = '''" + tripleQuoted(repro.StripHeader(string(ref.Source), "#")) + "'''\n")
	b.WriteString("reference = {}\nexec(compile(REFERENCE_SOURCE, \"reference\", \"exec\"), reference)\n\n")
	b.WriteString("# ---- the inputs, bit for bit " + strings.Repeat("-", 46) + "\n\n")
	b.WriteString("INPUTS = [\n")
	for i, prm := range f.Params {
		fmt.Fprintf(&b, "    (%s, %s),\n", pyString(prm.Name), inputLiteral(inputs[i]))
	}
	b.WriteString("]\n")
	results := make([]string, len(f.Results))
	for i, r := range f.Results {
		results[i] = pyString(r.Name)
	}
	fmt.Fprintf(&b, "RESULTS = [%s]\n", strings.Join(results, ", "))
	fmt.Fprintf(&b, "FRAMEWORK_FUNCTION = %s\nREFERENCE_FUNCTION = %s\n", fw.Names[opts.Func], pyString(ref.Names[opts.Func]))
	fmt.Fprintf(&b, "EXECUTOR = %s\nRTOL, ATOL = %s, %s\n", pyString(string(opts.Executor)), strconvFloat(opts.RTol), strconvFloat(opts.ATol))
	b.WriteString(reproMain)
	return []byte(b.String()), nil
}

// tripleQuoted escapes s for a triple-quoted Python literal: backslashes and quotes.
func tripleQuoted(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, `'`, `\'`)
}

// inputLiteral writes a tensor as Python: a plain int for an int64
// scalar, else np.frombuffer over base64 of its little-endian bytes.
func inputLiteral(t *tensor.Tensor) string {
	if t.DType == tensor.Int64 && len(t.Shape) == 0 {
		return fmt.Sprint(t.I64[0])
	}
	dt := "<f4"
	if t.DType == tensor.Int64 {
		dt = "<i8"
	}
	shape := repro.Dims(t)
	return fmt.Sprintf("np.frombuffer(base64.b64decode(%q), dtype=%q).reshape((%s))", base64.StdEncoding.EncodeToString(repro.LittleEndian(t)), dt, strings.Join(shape, ", ")+trailingComma(len(shape)))
}

func trailingComma(n int) string {
	if n == 1 {
		return ","
	}
	return ""
}

const reproMain = `

def framework_call(args):
    if EXECUTOR == "numpy":
        out = FRAMEWORK_FUNCTION(*args)
        return (out if isinstance(out, tuple) else (out,)), "numpy " + np.__version__
    import torch
    torch.set_num_threads(1)
    fn = FRAMEWORK_FUNCTION
    if EXECUTOR == "torchscript":
        fn = torch.jit.script(fn)
    targs = [a if isinstance(a, int) else torch.from_numpy(a.copy()) for a in args]
    out = fn(*targs)
    if not isinstance(out, tuple):
        out = (out,)
    return tuple(o.numpy() if isinstance(o, torch.Tensor) else o for o in out), EXECUTOR + " (torch " + torch.__version__ + ")"


def error_text(e):
    if isinstance(e, (ZeroDivisionError, OverflowError)):
        return str(e)
    lines = [ln for ln in str(e).splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    for kind in ("ZeroDivisionError: ", "OverflowError: "):
        if kind in last:
            return last.split(kind, 1)[1]
    return "%s: %s" % (type(e).__name__, last)


def run(call, args):
    try:
        out = call(args)
        return out, None
    except Exception as e:  # compared by text below
        return None, error_text(e)


def main():
    np.seterr(all="ignore")  # IEEE results without warnings, as rxeq's executors
    args32 = [v for _, v in INPUTS]
    args64 = [v if isinstance(v, int) or v.dtype != np.float32 else v.astype(np.float64) for v in args32]
    got, gerr = run(framework_call, args32)
    version = got[1] if got else EXECUTOR
    got = got[0] if got else None

    def ref_call(a):
        out = reference[REFERENCE_FUNCTION](*a)
        return out if isinstance(out, tuple) else (out,)

    want, werr = run(ref_call, args64)
    print("framework:", version, "| numpy", np.__version__, "| python", sys.version.split()[0])
    if gerr or werr:
        print("expected error:", werr)
        print("got error:     ", gerr)
        return 0 if gerr == werr else 1
    bad = False
    for name, w, g in zip(RESULTS, want, got):
        w, g = np.asarray(w), np.asarray(g)
        if w.shape != g.shape:
            print("%s: shape %s, want %s" % (name, g.shape, w.shape))
            bad = True
            continue
        if w.dtype.kind == "f":
            g64 = g.astype(np.float64)
            nan_ok = np.isnan(w) == np.isnan(g64)
            inf_ok = np.where(np.isinf(w) | np.isinf(g64), w == g64, True)
            with np.errstate(invalid="ignore"):
                close = np.abs(g64 - w) <= ATOL + RTOL * np.abs(w)
            ok = nan_ok & inf_ok & (close | np.isnan(w) | np.isinf(w))
        else:
            ok = w == g
        idx = np.argwhere(~ok)
        if len(idx) == 0:
            print("%s: %d elements agree" % (name, w.size))
            continue
        bad = True
        print("%s: %d / %d mismatched; first:" % (name, len(idx), w.size))
        for i in idx[:5]:
            i = tuple(int(k) for k in i)
            print("   ", list(i), "want", repr(w[i].item()), "got", repr(g[i].item()))
    print("REPRODUCED" if bad else "not reproduced: the outputs agree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
`
