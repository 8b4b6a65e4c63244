package fuzz

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// RoundTripName is the executor name that the findings of the ONNX round
// trip (Checker.RoundTrip) carry: the oracle running the program that
// onnx.Import made of onnx.Export's model of a function, held bit for
// bit to the oracle running the function itself. No executor of that
// name can be selected; its findings are of CatRoundTrip.
const RoundTripName executor.Name = "onnx-roundtrip"

// Trip is one ONNX round trip of function fn of the lowered program p:
// the export of fn as a model and the import of that model back into a
// program, as onnx.Import returns it (the source, its one function, and
// which model input and output each of its parameters and results stands
// for, in the model's order, which is fn's: see onnx.Signature). An error
// says the export or the import failed. ONNXTrip is the real one.
type Trip func(p *ir.Program, fn string) (*onnx.Imported, error)

// ONNXTrip is the round trip of `rxeq export --format onnx` and `rxeq
// import`: onnx.Export of fn, then onnx.Import of the model with the
// function's own name. Its error says which of the two failed and wraps
// theirs (ir.ErrUnsupported for the export, onnx.ErrImport for the
// import).
func ONNXTrip(p *ir.Program, fn string) (*onnx.Imported, error) {
	model, err := onnx.Export(p, fn, onnx.Meta{Source: "fuzz.rx"})
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	imp, err := onnx.Import(model, onnx.ImportOptions{Func: fn, Source: fn + ".onnx"})
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	return imp, nil
}

// tripped is a function that came back from its round trip.
type tripped struct {
	fn      *program.Func             // the imported function
	params  []string                  // the imported parameter standing for each of the original's parameters
	results []string                  // the imported result standing for each of the original's results
	weights map[string]*tensor.Tensor // the imported program's weights (none for what rxeq exports)
	base    Finding                   // the finding of a difference, without its kind and detail
}

// tripRefused says why function fn is not round-tripped ("" when it is):
// the forms the language accepts but a scenario, and so the import
// (which writes a scenario), does not: an int64 tensor parameter (a
// scenario's inputs are float32 tensors and int64 scalars; import refuses
// an INT64 tensor input, class dtype) and a second free symbolic
// dimension (a scenario binds only the batch; import refuses a second
// dim_param, class shape). The generator writes neither; a program given
// to Check may.
func tripRefused(fn *program.Func) string {
	if len(fn.Syms) > 1 {
		return fmt.Sprintf("%d symbolic dimensions", len(fn.Syms))
	}
	for _, v := range fn.Params {
		if v.Type.DType == ir.Int64 && v.Type.Rank() > 0 {
			return "an int64 tensor parameter " + v.Name
		}
	}
	return ""
}

// roundTrip sends function fn of p through c.RoundTrip and reads the
// program it gives back. It returns nil and no finding for a function
// that is not round-tripped (tripRefused), and nil with a finding of
// KindRoundTrip when the export or the import failed (or panicked), or
// what it gave does not check or does not match fn's parameters and
// results.
func (c *Checker) roundTrip(p *ir.Program, fn *program.Func, ref executor.Name) (_ *tripped, found *Finding) {
	base := Finding{Reference: ref, Executor: RoundTripName, Func: fn.Name}
	fail := func(format string, args ...any) *Finding {
		f := base
		f.Kind, f.Detail = KindRoundTrip, fmt.Sprintf(format, args...)
		return &f
	}
	if tripRefused(fn) != "" {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			found = fail("panic: %v", r)
		}
	}()
	imp, err := c.RoundTrip(p, fn.Name)
	if err != nil {
		return nil, fail("%v", err)
	}
	back, err := program.Parse(fn.Name+".imported.rx", imp.Source)
	if err != nil {
		return nil, fail("the imported program does not check: %v", err)
	}
	bf := back.Func(imp.Func)
	switch {
	case bf == nil:
		return nil, fail("the imported program has no function %s", imp.Func)
	case len(imp.Inputs) != len(fn.Params):
		return nil, fail("the imported model has %d inputs for %d parameters", len(imp.Inputs), len(fn.Params))
	case len(imp.Outputs) != len(fn.Results):
		return nil, fail("the imported model has %d outputs for %d results", len(imp.Outputs), len(fn.Results))
	}
	t := &tripped{fn: bf, weights: imp.Weights, base: base}
	for _, b := range imp.Inputs {
		t.params = append(t.params, b.RX)
	}
	for _, b := range imp.Outputs {
		t.results = append(t.results, b.RX)
	}
	return t, nil
}

// check runs the imported function under the oracle on the inputs of the
// original (their copies) and compares what it gives with the original's
// outputs and error under the oracle (want, wantErr), bit for bit (NaN
// payloads aside, compare.BitDiff) and error for error (tripErrors): a
// finding of KindError, KindProblem or KindMismatch per difference.
func (t *tripped) check(ctx context.Context, fn *program.Func, batch int, inputs map[string]*tensor.Tensor,
	want map[string]*tensor.Tensor, wantErr error) ([]Finding, error) {
	in := make(map[string]*tensor.Tensor, len(inputs)+len(t.weights))
	for i, p := range fn.Params {
		in[t.params[i]] = inputs[p.Name].Clone()
	}
	for name, w := range t.weights {
		in[name] = w.Clone()
	}
	out, gotErr := oracle.Run(ctx, t.fn, in)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	base := t.base
	base.Batch = batch
	if ok, msg := tripErrors(wantErr, gotErr); !ok {
		base.Kind, base.Detail = KindError, "the imported program "+msg
		base.RefKind, base.GotKind = errorKind(wantErr), errorKind(gotErr)
		if wantErr != nil {
			base.RefError = wantErr.Error()
		}
		if gotErr != nil {
			base.GotError = gotErr.Error()
		}
		return []Finding{base}, nil
	}
	if wantErr != nil {
		return nil, nil
	}
	var found []Finding
	for i, r := range fn.Results {
		w, g := want[r.Name], out[t.results[i]]
		d := compare.BitDiff(w, g)
		if d == "" {
			continue
		}
		f := base
		f.Output = r.Name
		f.Detail = fmt.Sprintf("%s: the imported program's %s differs from the original's under the oracle: %s (original vs imported)", r.Name, t.results[i], d)
		if w == nil || g == nil || w.DType != g.DType || !slices.Equal(w.Shape, g.Shape) {
			f.Kind = KindProblem
		} else {
			f.Kind, f.Values, f.Shape = KindMismatch, BitValues(w, g), shapeClass(g.Shape)
		}
		found = append(found, f)
	}
	return found, nil
}

// operandPattern finds the operand values a checked operation's error
// names ("(n=5)", "(n=-9223372036854775808, divisor -1)").
var operandPattern = regexp.MustCompile(`=(-?[0-9]+)`)

// tripErrors compares the original's error under the oracle (want) with
// the imported program's (got): both nil, or the same kind (errors.Is),
// function, builtin and operand values. The operand's text and the
// position are the program's own and change in the round trip
// (CheckedRem(i+phase, 2) may come back as CheckedRem(v3, 2)), so they
// are not compared; an error that is not an *ir.RuntimeError is compared
// as compare.Errors does.
func tripErrors(want, got error) (ok bool, msg string) {
	switch {
	case want == nil && got == nil:
		return true, ""
	case want == nil:
		return false, fmt.Sprintf("fails where the original does not: %v", got)
	case got == nil:
		return false, fmt.Sprintf("does not fail where the original fails with %v", want)
	}
	var we, ge *ir.RuntimeError
	if !errors.As(want, &we) || !errors.As(got, &ge) {
		if ok, m := compare.Errors(want, got); !ok {
			return false, "fails otherwise: " + m
		}
		return true, ""
	}
	site := func(e *ir.RuntimeError) string {
		builtin, _, _ := strings.Cut(e.Detail, ":")
		return e.Func + ": " + builtin + fmt.Sprint(operandPattern.FindAllString(e.Detail, -1))
	}
	if !errors.Is(got, we.Kind) || site(we) != site(ge) {
		return false, fmt.Sprintf("fails otherwise: %q, the original %q", got, want)
	}
	return true, ""
}

// RoundTripRepro is the repro.sh of a round-trip finding rec (saved next
// to its reduced program, rec.Reduced): it exports the finding's function
// with `rxeq export --format onnx`, imports the model with `rxeq import`
// (the imported program is left beside it as FUNC.imported.rx), and
// checks the round trip again with `rxeq reduce --executors oracle
// --roundtrip`, the oracle alone, one candidate; it exits 1 while the
// finding reproduces (or the export or the import fails), 0 when it no
// longer does. It needs rxeq on PATH and nothing else.
func RoundTripRepro(rec *Record) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n# Reproducer of rxeq fuzz finding %s (%s): function %s of %s does not come back\n", rec.ID, rec.Category, rec.Func, rec.Reduced)
	b.WriteString("# from its ONNX export and import computing the same bits under the oracle.\n")
	for _, l := range strings.Split(strings.TrimRight(rec.Detail, "\n"), "\n") {
		fmt.Fprintf(&b, "# %s\n", l)
	}
	b.WriteString("# Exit 1: the finding reproduces; 0: the round trip holds.\n")
	b.WriteString("cd \"$(dirname \"$0\")\" || exit 2\n")
	fmt.Fprintf(&b, "rxeq export --format onnx --func %s -o %s.onnx %s || exit 1\n", rec.Func, rec.Func, rec.Reduced)
	fmt.Fprintf(&b, "rxeq import --func %s -o %s.imported.rx %s.onnx || exit 1\n", rec.Func, rec.Func, rec.Func)
	fmt.Fprintf(&b, "if rxeq reduce --executors oracle --roundtrip --max-tests 1 %s >/dev/null; then\n", rec.Reduced)
	b.WriteString("  echo \"reproduced: the round trip does not hold\"\n  exit 1\nfi\necho \"not reproduced\"\nexit 0\n")
	return []byte(b.String())
}
