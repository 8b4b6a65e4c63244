package ir

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/tensor"
)

// CheckSizes reports, as an error of kind ErrShape, a shape among types
// that holds more than tensor.MaxElements elements (2^60 - 1: its size in
// bytes, 8 per element, must fit in int64) once its symbols take their
// values from env, the bindings BindInputs made. It returns nil when every
// shape fits; a shape with a symbol not in env is skipped.
//
// Every executor calls it on every type of the function right after
// binding the inputs and before it allocates anything, so an overflowing
// shape fails the same way everywhere, never as a wrapped size, an
// out-of-bounds access or an allocation panic. The checker rejects shapes
// that overflow at the file's batches; this catches the rest (a larger
// batch, hand-built inputs such as MatMul of [M][0] by [0][N] with M and N
// near 2^32). When several shapes overflow, the one with the most elements
// is named (ties: the larger dims, compared left to right, then the type's
// text), so the message does not depend on the order in which an executor
// holds its types.
func CheckSizes(fn string, types []Type, env map[string]int64) *RuntimeError {
	var (
		worst     Type
		worstDims []int64
		worstLog  float64
		found     bool
	)
	for _, t := range types {
		dims, ok := concreteDims(t.Shape, env)
		if !ok || !overflows(dims) {
			continue
		}
		l := log2Count(dims)
		if !found || l > worstLog || (l == worstLog && compareDims(dims, worstDims, t, worst) > 0) {
			worst, worstDims, worstLog, found = t, dims, l, true
		}
	}
	if !found {
		return nil
	}
	return &RuntimeError{Kind: ErrShape, Func: fn, Detail: fmt.Sprintf(
		"shape %s is %s with the inputs' dimensions (%s): about 2^%s elements, more than the %d (2^60 - 1) a tensor may hold",
		ShapeString(worst.Shape), formatDims(worstDims), formatEnv(env), FormatLog2(worstLog), tensor.MaxElements)}
}

// concreteDims returns shape's sizes with symbols from env; ok is false
// when a symbol is unbound or a size negative.
func concreteDims(shape []Dim, env map[string]int64) ([]int64, bool) {
	out := make([]int64, len(shape))
	for i, d := range shape {
		v := d.Size
		if d.IsSym() {
			var ok bool
			if v, ok = env[d.Sym]; !ok {
				return nil, false
			}
		}
		if v < 0 {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// overflows reports whether dims hold more than tensor.MaxElements
// elements (a zero dimension means none).
func overflows(dims []int64) bool {
	if slices.Contains(dims, 0) {
		return false
	}
	n := int64(1)
	for _, d := range dims {
		if n > tensor.MaxElements/d {
			return true
		}
		n *= d
	}
	return false
}

// log2Count returns log2 of the product of positive dims.
func log2Count(dims []int64) float64 {
	l := 0.0
	for _, d := range dims {
		l += math.Log2(float64(d))
	}
	return l
}

// FormatLog2 prints a base-2 logarithm to one decimal, without a trailing
// ".0": 64, 70.2. Messages about sizes too large to print use it.
func FormatLog2(l float64) string {
	return strconv.FormatFloat(math.Round(l*10)/10, 'f', -1, 64)
}

func compareDims(a, b []int64, ta, tb Type) int {
	if c := slices.Compare(a, b); c != 0 {
		return c
	}
	return strings.Compare(ta.String(), tb.String())
}

func formatDims(dims []int64) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func formatEnv(env map[string]int64) string {
	if len(env) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		parts = append(parts, k+"="+strconv.FormatInt(env[k], 10))
	}
	return strings.Join(parts, ", ")
}
