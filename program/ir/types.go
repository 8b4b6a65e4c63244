// Package ir is the intermediate representation that rxeq lowers checked
// programs to. It is the only thing the fallback interpreter and the native
// code generator see.
//
// A Func is a list of instructions over typed Values. Values of kind Temp
// are written exactly once; Params are never written; Vars, Results and
// loop indices may be written many times (always with the same type and
// shape). Control flow is structured: a For holds its body, an If its two
// branches, in source order. Float constants are float64 here and are
// rounded to float32 once by each float32 executor.
//
// The package also holds what every executor must agree on bit for bit
// outside the numerics: shapes with symbolic dimensions, binding inputs to
// them at the call boundary, and the runtime error kinds and their texts.
package ir

import (
	"strconv"
	"strings"
)

// DType is the element type of a value.
type DType uint8

// The element types of the language. Bool exists only for conditions.
const (
	InvalidDType DType = iota
	Float32
	Int64
	Bool
)

// String returns the language's spelling.
func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case Int64:
		return "int64"
	case Bool:
		return "bool"
	}
	return "invalid"
}

// Dim is one dimension: a constant size, or a symbolic name (Sym != "")
// bound at call time from the inputs.
type Dim struct {
	Size int64
	Sym  string
}

// IsSym reports whether the dimension is symbolic.
func (d Dim) IsSym() bool { return d.Sym != "" }

// String prints the size or the symbol.
func (d Dim) String() string {
	if d.Sym != "" {
		return d.Sym
	}
	return strconv.FormatInt(d.Size, 10)
}

// Type is an element type and a shape. Rank 0 is a scalar.
type Type struct {
	DType DType
	Shape []Dim
}

// Rank returns the number of dimensions.
func (t Type) Rank() int { return len(t.Shape) }

// IsIntScalar reports whether t is a rank-0 int64: a loop index, an int64
// parameter, or an integer expression.
func (t Type) IsIntScalar() bool { return t.DType == Int64 && len(t.Shape) == 0 }

// Equal reports whether two types have the same dtype and the same dims.
func (t Type) Equal(u Type) bool {
	if t.DType != u.DType || len(t.Shape) != len(u.Shape) {
		return false
	}
	for i := range t.Shape {
		if t.Shape[i] != u.Shape[i] {
			return false
		}
	}
	return true
}

// String prints the type in Go array syntax: [B][32]float32.
func (t Type) String() string {
	var b strings.Builder
	for _, d := range t.Shape {
		b.WriteString("[" + d.String() + "]")
	}
	b.WriteString(t.DType.String())
	return b.String()
}

// ShapeString prints the dims alone: [B 32].
func ShapeString(shape []Dim) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Concrete returns the sizes of shape with symbols replaced from env. A
// symbol missing from env is an internal error reported as -1.
func Concrete(shape []Dim, env map[string]int64) []int {
	out := make([]int, len(shape))
	for i, d := range shape {
		if d.Sym == "" {
			out[i] = int(d.Size)
		} else if v, ok := env[d.Sym]; ok {
			out[i] = int(v)
		} else {
			out[i] = -1
		}
	}
	return out
}
