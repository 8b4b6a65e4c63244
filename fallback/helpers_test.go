package fallback_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math"

	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
	"github.com/rextio/rxeq/tensor"
)

type inputs = map[string]*tensor.Tensor

func run(fn *ir.Func, in inputs) (map[string]*tensor.Tensor, error) {
	return fallback.Run(context.Background(), fn, in)
}

func f32(data []float32, shape ...int) *tensor.Tensor { return tensor.FromFloat32(data, shape...) }

// unaryFn is func f(x [n]float32) (y [n]float32) { y = k(x) }.
func unaryFn(k ir.OpKind, n int) *ir.Func {
	b := irtest.NewFunc("f")
	x := b.Param("x", ir.Float32, n)
	y := b.Result("y", ir.Float32, n)
	b.Op(k, y, x)
	return b.Fn
}

// binaryFn is func f(x [xs], y [ys]) (z [zs]) { z = k(x, y) }.
func binaryFn(k ir.OpKind, xs, ys, zs []any) *ir.Func {
	b := irtest.NewFunc("f")
	x := b.Param("x", ir.Float32, xs...)
	y := b.Param("y", ir.Float32, ys...)
	z := b.Result("z", ir.Float32, zs...)
	b.Op(k, z, x, y)
	return b.Fn
}

// intFn is func f(a, c int64) (r int64) { r = k(a, c) } (or k(a) for one
// operand), with a checked-op site for CheckedDiv and CheckedRem.
func intFn(k ir.OpKind, arity int) *ir.Func {
	b := irtest.NewFunc("f")
	a := b.Param("a", ir.Int64)
	c := b.Param("c", ir.Int64)
	r := b.Result("r", ir.Int64)
	args := []*ir.Value{a, c}[:arity]
	o := b.Op(k, r, args...)
	if k == ir.CheckedDiv || k == ir.CheckedRem {
		o.Site = &ir.Site{Func: "f", Builtin: map[ir.OpKind]string{ir.CheckedDiv: "CheckedDiv", ir.CheckedRem: "CheckedRem"}[k], LHS: "a", Pos: "t.rx:2:7"}
	}
	return b.Fn
}

// digest hashes every input tensor's shape and data, to prove they are
// left unchanged.
func digest(in inputs) [32]byte {
	h := sha256.New()
	for _, name := range []string{"x", "w", "b", "y", "a", "c", "n"} {
		t := in[name]
		if t == nil {
			continue
		}
		h.Write([]byte(name))
		for _, d := range t.Shape {
			_ = binary.Write(h, binary.LittleEndian, int64(d))
		}
		for _, v := range t.F32 {
			_ = binary.Write(h, binary.LittleEndian, math.Float32bits(v))
		}
		for _, v := range t.I64 {
			_ = binary.Write(h, binary.LittleEndian, v)
		}
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

func nan32() float32 { return float32(math.NaN()) }
