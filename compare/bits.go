package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rextio/rxeq/tensor"
)

// BitDiff describes the first element where a and b differ bit for bit,
// or returns "" when they do not. NaNs are equal whatever their sign and
// payload (no rule of rxeq's judgement looks at them); +0 and −0 differ,
// as do any two floats with different bits. Tensors of different dtypes
// or shapes, or one missing, differ.
func BitDiff(a, b *tensor.Tensor) string {
	if a == nil && b == nil {
		return ""
	}
	if a == nil || b == nil || a.DType != b.DType || !slices.Equal(a.Shape, b.Shape) {
		return fmt.Sprintf("shape or dtype differs: %s vs %s", describeTensor(a), describeTensor(b))
	}
	at := func(i int) string { return tensor.FormatIndex(tensor.Index(a.Shape, i)) }
	switch a.DType {
	case tensor.Int64:
		for i := range a.I64 {
			if a.I64[i] != b.I64[i] {
				return fmt.Sprintf("at %s: %d vs %d", at(i), a.I64[i], b.I64[i])
			}
		}
	case tensor.Float32:
		for i := range a.F32 {
			x, y := a.F32[i], b.F32[i]
			if math.Float32bits(x) != math.Float32bits(y) && !(x != x && y != y) {
				return fmt.Sprintf("at %s: %v (%#08x) vs %v (%#08x)", at(i), x, math.Float32bits(x), y, math.Float32bits(y))
			}
		}
	case tensor.Float64:
		for i := range a.F64 {
			x, y := a.F64[i], b.F64[i]
			if math.Float64bits(x) != math.Float64bits(y) && !(x != x && y != y) {
				return fmt.Sprintf("at %s: %v vs %v", at(i), x, y)
			}
		}
	}
	return ""
}

// Bits compares the outputs and errors of an executor (got, gotErr) with
// those of the executor it must equal bit for bit (want, wantErr: its
// twin, executor.Twin), and names both in msg: every output by BitDiff,
// in name order, and the errors by Errors (the same kind and text). ok is
// true when they agree; msg then is "".
func Bits(gotName, wantName string, want map[string]*tensor.Tensor, wantErr error, got map[string]*tensor.Tensor, gotErr error) (ok bool, msg string) {
	if wantErr != nil || gotErr != nil {
		switch {
		case wantErr == nil:
			return false, fmt.Sprintf("%s failed but %s, which it must equal bit for bit, succeeded: %s", gotName, wantName, describeError(gotErr))
		case gotErr == nil:
			return false, fmt.Sprintf("%s succeeded but %s, which it must equal bit for bit, failed with %s", gotName, wantName, describeError(wantErr))
		}
		if ok, m := Errors(wantErr, gotErr); !ok {
			return false, fmt.Sprintf("%s and %s, which must fail alike, fail differently: %s", gotName, wantName, m)
		}
		return true, ""
	}
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var diffs []string
	for _, n := range names {
		if d := BitDiff(got[n], want[n]); d != "" {
			diffs = append(diffs, fmt.Sprintf("%s: %s %s", n, d, "("+gotName+" vs "+wantName+")"))
		}
	}
	if len(diffs) == 0 {
		return true, ""
	}
	return false, fmt.Sprintf("%s differs bit for bit from %s, which it must equal: %s", gotName, wantName, strings.Join(diffs, "; "))
}

func describeTensor(t *tensor.Tensor) string {
	if t == nil {
		return "missing"
	}
	return strings.TrimSpace(fmt.Sprintf("%s%v", t.DType, t.Shape))
}
