package fuzz

import (
	"go/ast"
	"go/token"
	"math"
)

// maker builds an expression of a known shape and returns its bound.
type maker func() (ast.Expr, float64)

var reducers = []string{"Sum", "Mean", "Max"}

// reduceBound is the bound of a reduction over n elements of bound b.
func reduceBound(name string, n, b float64) float64 {
	if name == "Sum" {
		return n * b
	}
	return b
}

// sources returns the ways to make shape s in one step from a visible
// float variable: the variable itself, its transpose, or a reduction of
// it along one axis (dropped or kept).
func (g *fnGen) sources(s shape) []maker {
	var out []maker
	for _, v := range g.floats() {
		v := v
		if v.shp.eq(s) {
			out = append(out, func() (ast.Expr, float64) { return ident(v.name), v.bound })
		}
		if len(v.shp) == 2 && g.has(FeatTranspose) && v.shp.transposed().eq(s) {
			out = append(out, func() (ast.Expr, float64) { return call("Transpose", ident(v.name)), v.bound })
		}
		if !g.has(FeatReduce) {
			continue
		}
		for a := range v.shp {
			a := a
			keep := g.has(FeatKeepDims) && v.shp.keep(a).eq(s)
			if !v.shp.drop(a).eq(s) && !keep {
				continue
			}
			out = append(out, func() (ast.Expr, float64) {
				name := g.pick(reducers)
				args := []ast.Expr{ident(v.name), g.axis(a, len(v.shp))}
				if keep {
					args = append(args, ident("true"))
				} else if g.chance(6) {
					args = append(args, ident("false"))
				}
				return g.capped(call(name, args...), reduceBound(name, v.shp[a].extent(), v.bound))
			})
		}
	}
	return out
}

// canMake reports whether sources(s) is not empty, without building it.
func (g *fnGen) canMake(s shape) bool {
	for _, v := range g.floats() {
		if v.shp.eq(s) || (len(v.shp) == 2 && g.has(FeatTranspose) && v.shp.transposed().eq(s)) {
			return true
		}
		if g.has(FeatReduce) && len(v.shp) == len(s)+1 {
			for a := range v.shp {
				if v.shp.drop(a).eq(s) {
					return true
				}
			}
		}
		if g.has(FeatReduce) && g.has(FeatKeepDims) && len(v.shp) == len(s) {
			for a := range v.shp {
				if v.shp.keep(a).eq(s) {
					return true
				}
			}
		}
	}
	return false
}

// axis prints axis a of a rank-r operand, sometimes counted from the end.
func (g *fnGen) axis(a, r int) ast.Expr {
	if g.chance(4) {
		return intLit(int64(a - r))
	}
	return intLit(int64(a))
}

// splits returns the inner dimensions K for which MatMul([s0 K], [K s1])
// can make the rank-2 shape s from one-step sources.
func (g *fnGen) splits(s shape) []dim {
	if len(s) != 2 || !g.has(FeatMatMul) {
		return nil
	}
	var out []dim
	ks := g.dims
	if !containsDim(ks, one) {
		ks = append(append([]dim(nil), ks...), one) // keepdims make size-1 dims
	}
	for _, k := range ks {
		if g.canMake(shape{s[0], k}) && g.canMake(shape{k, s[1]}) {
			out = append(out, k)
		}
	}
	return out
}

// candidateShapes are the shapes a new variable or a result may take:
// every shape with a one-step source, and MatMul products of them.
func (g *fnGen) candidateShapes() []shape {
	var out []shape
	add := func(s shape) {
		for _, t := range out {
			if t.eq(s) {
				return
			}
		}
		out = append(out, s)
	}
	for _, v := range g.floats() {
		add(v.shp)
		if len(v.shp) == 2 && g.has(FeatTranspose) {
			add(v.shp.transposed())
		}
		if g.has(FeatReduce) {
			for a := range v.shp {
				add(v.shp.drop(a))
				if g.has(FeatKeepDims) {
					add(v.shp.keep(a))
				}
			}
		}
	}
	if g.has(FeatMatMul) {
		base := append([]shape(nil), out...) // products of one-step shapes only
		for _, a := range base {
			for _, b := range base {
				if len(a) == 2 && len(b) == 2 && a[1].eq(b[0]) {
					add(shape{a[0], b[1]})
				}
			}
		}
	}
	return out
}

// leaf makes shape s as directly as possible.
func (g *fnGen) leaf(s shape) (ast.Expr, float64) {
	if g.has(FeatNaN) && g.chance(8) {
		// Only parameters: their values are the same float32 numbers in
		// every executor, so NaN and -Inf appear at the same places.
		for _, v := range g.floats() {
			if v.kind == paramVar && v.shp.eq(s) {
				if g.chance(2) {
					return call("Sqrt", ident(v.name)), math.Sqrt(v.bound)
				}
				return g.capped(call("Log", call("Abs", ident(v.name))), 100)
			}
		}
	}
	if src := g.sources(s); len(src) > 0 {
		return pickOf(g.gen, src)()
	}
	if ks := g.splits(s); len(ks) > 0 {
		return g.matmul(s, pickOf(g.gen, ks), 0)
	}
	panic("fuzz: generator bug: no way to make shape " + s.key())
}

func (g *fnGen) matmul(s shape, k dim, d int) (ast.Expr, float64) {
	if g.has(FeatEdges) && g.chance(2) && g.canMake(shape{k, s[0]}) {
		// Transpose feeding MatMul: a strided operand.
		a, ba := g.expr(shape{k, s[0]}, d)
		b, bb := g.expr(shape{k, s[1]}, d)
		return g.capped(call("MatMul", call("Transpose", a), b), k.extent()*ba*bb)
	}
	a, ba := g.expr(shape{s[0], k}, d)
	b, bb := g.expr(shape{k, s[1]}, d)
	return g.capped(call("MatMul", a, b), k.extent()*ba*bb)
}

// expr generates a float32 expression of exactly shape s, at most d
// operators deep, and returns it with a bound on its magnitude (at most
// capBound).
func (g *fnGen) expr(s shape, d int) (ast.Expr, float64) {
	if d <= 0 || g.chance(5) {
		return g.leaf(s)
	}
	var opts choices[maker]
	add := opts.add
	sub := func() (ast.Expr, float64) { return g.expr(s, d-1) }
	add(3, true, func() (ast.Expr, float64) { return g.arith(s, d) })
	add(1, g.has(FeatTanh), func() (ast.Expr, float64) { x, b := sub(); return call("Tanh", x), math.Min(b, 1) })
	add(1, g.has(FeatSigmoid), func() (ast.Expr, float64) { x, _ := sub(); return call("Sigmoid", x), 1 })
	add(1, g.has(FeatRelu), func() (ast.Expr, float64) { x, b := sub(); return call("Relu", x), b })
	add(1, g.has(FeatAbs), func() (ast.Expr, float64) { x, b := sub(); return call("Abs", x), b })
	add(1, g.has(FeatNeg), func() (ast.Expr, float64) { x, b := sub(); return neg(x), b })
	add(1, g.has(FeatExp), func() (ast.Expr, float64) { return g.exp(sub()) })
	add(1, g.has(FeatLog), func() (ast.Expr, float64) { return g.log(sub()) })
	add(1, g.has(FeatSqrt), func() (ast.Expr, float64) { return g.sqrt(sub()) })
	add(1, g.has(FeatMaxMin), func() (ast.Expr, float64) {
		x, bx := sub()
		y, by := g.operand(s, d-1)
		if g.chance(2) {
			x, y = y, x
		}
		return call(g.pick([]string{"Maximum", "Minimum"}), x, y), math.Max(bx, by)
	})
	if len(s) > 0 {
		add(1, g.has(FeatSoftmax), func() (ast.Expr, float64) {
			x, _ := sub()
			return call("Softmax", x, g.axis(g.rng.IntN(len(s)), len(s))), 1
		})
		add(1, g.has(FeatLogSoftmax), func() (ast.Expr, float64) {
			x, b := sub()
			a := g.rng.IntN(len(s))
			return g.capped(call("LogSoftmax", x, g.axis(a, len(s))), 2*b+math.Log(s[a].extent())+1)
		})
	}
	if g.has(FeatReduce) {
		for a := 0; a <= len(s) && len(s) < 3; a++ {
			for _, k := range g.dims {
				inner := s.insert(a, k)
				if !g.canMake(inner) {
					continue
				}
				a, k := a, k
				add(1, true, func() (ast.Expr, float64) {
					x, b := g.expr(inner, d-1)
					name := g.pick(reducers)
					return g.capped(call(name, x, g.axis(a, len(inner))), reduceBound(name, k.extent(), b))
				})
			}
		}
		for a := range s {
			if !g.has(FeatKeepDims) || !s[a].eq(one) {
				continue
			}
			for _, k := range g.dims {
				inner := append(shape{}, s...)
				inner[a] = k
				if k.eq(one) || !g.canMake(inner) {
					continue
				}
				a, k := a, k
				add(1, true, func() (ast.Expr, float64) {
					x, b := g.expr(inner, d-1)
					name := g.pick(reducers)
					return g.capped(call(name, x, g.axis(a, len(inner)), ident("true")), reduceBound(name, k.extent(), b))
				})
			}
		}
	}
	if len(s) == 2 && g.has(FeatTranspose) && g.canMake(s.transposed()) {
		add(1, true, func() (ast.Expr, float64) { x, b := g.expr(s.transposed(), d-1); return call("Transpose", x), b })
	}
	if ks := g.splits(s); len(ks) > 0 {
		add(2, true, func() (ast.Expr, float64) { return g.matmul(s, pickOf(g.gen, ks), d-1) })
	}
	add(6, g.has(FeatEdges), func() (ast.Expr, float64) { return g.edge(s, d) })
	return g.capped(opts.draw(g.gen)())
}

// edgeLeaf makes shape s for an edge-seeking op: a parameter of that
// shape as it is (its edge values unsquashed) when there is one.
func (g *fnGen) edgeLeaf(s shape) (ast.Expr, float64) {
	var ps []*variable
	for _, v := range g.floats() {
		if v.kind == paramVar && v.shp.eq(s) {
			ps = append(ps, v)
		}
	}
	if len(ps) > 0 && !g.chance(4) {
		v := pickOf(g.gen, ps)
		return ident(v.name), v.bound
	}
	return g.leaf(s)
}

// edge generates an expression of shape s that aims at the places where
// frameworks differ (FeatEdges): signed zeros meeting in Maximum,
// Minimum and Relu, made observable by a division; Exp, Sigmoid and Tanh
// of unsquashed arguments (near their overflow and saturation points
// with edge(expedge) inputs); Log and Sqrt at and below zero; Softmax
// and LogSoftmax of rows that may be all −Inf; reductions of rows with
// NaN and ±Inf at any position. The oracle defines what each must give,
// and the noise runs excuse what float32 itself does.
func (g *fnGen) edge(s shape, d int) (ast.Expr, float64) {
	x, b := g.edgeLeaf(s)
	var opts choices[maker]
	add := opts.add
	add(4, true, func() (ast.Expr, float64) {
		y, _ := g.edgeLeaf(s)
		if g.chance(3) {
			y = neg(y)
		}
		if g.chance(3) {
			x = neg(x)
		}
		m := call(g.pick([]string{"Maximum", "Minimum"}), x, y)
		if g.chance(4) {
			m = call(g.pick([]string{"Maximum", "Minimum"}), y, x)
		}
		return bin(token.QUO, floatLit(1), m), 1e38
	})
	add(2, true, func() (ast.Expr, float64) {
		if g.chance(3) {
			x = neg(x)
		}
		return bin(token.QUO, floatLit(1), call("Relu", x)), 1e38
	})
	add(3, true, func() (ast.Expr, float64) {
		return call(g.pick([]string{"Exp", "Sigmoid", "Tanh"}), x), math.Max(math.Exp(math.Min(b, 90)), 1)
	})
	add(2, true, func() (ast.Expr, float64) { return call(g.pick([]string{"Log", "Sqrt"}), x), b })
	// Log makes a tail visible that tolerances absorb: a subnormal
	// Sigmoid(x) or Exp(x) (x below -88.7) flushed to 0 is -Inf after it,
	// against x itself.
	add(1, true, func() (ast.Expr, float64) {
		return call("Log", call(g.pick([]string{"Sigmoid", "Exp"}), x)), math.Max(b, 1)
	})
	if len(s) > 0 {
		add(2, true, func() (ast.Expr, float64) {
			return call(g.pick([]string{"Softmax", "LogSoftmax"}), x, g.axis(len(s)-1, len(s))), 1e38
		})
	}
	if len(s) < 3 {
		var inners []struct {
			a     int
			inner shape
		}
		for a := 0; a <= len(s); a++ {
			for _, k := range g.dims {
				if inner := s.insert(a, k); g.canMake(inner) {
					inners = append(inners, struct {
						a     int
						inner shape
					}{a, inner})
				}
			}
		}
		if len(inners) > 0 {
			add(3, true, func() (ast.Expr, float64) {
				in := pickOf(g.gen, inners)
				y, by := g.edgeLeaf(in.inner)
				name := g.pick(reducers)
				r := call(name, y, g.axis(in.a, len(in.inner)))
				if name == "Max" && g.chance(2) {
					return bin(token.QUO, floatLit(1), r), 1e38
				}
				return r, reduceBound(name, in.inner[in.a].extent(), by)
			})
		}
	}
	return opts.draw(g.gen)()
}

// arith generates x op y with y broadcast to s.
func (g *fnGen) arith(s shape, d int) (ast.Expr, float64) {
	x, bx := g.expr(s, d-1)
	ops := []token.Token{token.ADD}
	if g.has(FeatSubMulDiv) {
		ops = append(ops, token.SUB, token.MUL, token.QUO)
	}
	op := pickOf(g.gen, ops)
	if op == token.QUO {
		if g.has(FeatLiterals) && g.chance(2) {
			c := pickOf(g.gen, []float64{2, 4, 0.5, -8, 3, 1.5})
			return bin(op, x, floatLit(c)), bx / math.Abs(c)
		}
		y, _ := g.operand(s, d-1)
		return bin(op, x, bin(token.ADD, call("Abs", y), floatLit(1))), bx
	}
	y, by := g.operand(s, d-1)
	if g.chance(2) {
		x, y = y, x
	}
	if op == token.MUL {
		return bin(op, x, y), bx * by
	}
	return bin(op, x, y), bx + by
}

// operand generates an expression that broadcasts to s: s itself, a
// literal or constant, a variable of a broadcastable shape, or a
// keepdims reduction.
func (g *fnGen) operand(s shape, d int) (ast.Expr, float64) {
	r := g.rng.IntN(8)
	if r == 0 && g.has(FeatLiterals) {
		if len(g.consts) > 0 && g.chance(4) {
			c := pickOf(g.gen, g.consts)
			return ident(c.name), float64(c.value)
		}
		c := pickOf(g.gen, []float64{0.5, 2, -1, 0.25, 1.5, 3, -0.125, 0.001, 1})
		return floatLit(c), math.Abs(c)
	}
	if r <= 2 {
		var vs []*variable
		for _, v := range g.floats() {
			if v.shp.broadcastsTo(s) && !v.shp.eq(s) {
				vs = append(vs, v)
			}
		}
		if len(vs) > 0 {
			v := pickOf(g.gen, vs)
			return ident(v.name), v.bound
		}
	}
	if r == 3 && g.has(FeatReduce) && g.has(FeatKeepDims) {
		var axes []int
		for a := range s {
			if !s[a].eq(one) {
				axes = append(axes, a)
			}
		}
		if len(axes) > 0 {
			a := pickOf(g.gen, axes)
			x, b := g.expr(s, d-1)
			name := g.pick(reducers)
			return g.capped(call(name, x, g.axis(a, len(s)), ident("true")), reduceBound(name, s[a].extent(), b))
		}
	}
	return g.expr(s, d)
}

func (g *fnGen) exp(x ast.Expr, b float64) (ast.Expr, float64) {
	if g.has(FeatExpOverflow) && g.chance(4) {
		// Unbounded: Exp(32x) overflows float32 (above 88.7) where the
		// oracle's float64 stays finite. Whatever follows (a product, a
		// scale, a clamp, Inf·0) is a float32 limit, not a bug, and the
		// noise runs must say so: none of it may be reported.
		return call("Exp", bin(token.MUL, x, floatLit(32))), 1e39
	}
	if b <= 3 && g.chance(2) {
		return call("Exp", x), math.Exp(b)
	}
	switch g.rng.IntN(3) {
	case 0:
		return call("Exp", call("Tanh", x)), math.E
	case 1:
		return call("Exp", neg(call("Abs", x))), 1
	}
	return call("Exp", call("Minimum", x, floatLit(2))), math.Exp(2)
}

func (g *fnGen) log(x ast.Expr, b float64) (ast.Expr, float64) {
	if b <= capBound && g.chance(3) {
		return call("Log", call("Sigmoid", x)), b + 1
	}
	return call("Log", bin(token.ADD, call("Abs", x), floatLit(1))), math.Log(b + 1)
}

func (g *fnGen) sqrt(x ast.Expr, b float64) (ast.Expr, float64) {
	if g.chance(4) {
		return call("Sqrt", call("Sigmoid", x)), 1
	}
	return call("Sqrt", bin(token.ADD, call("Abs", x), floatLit(1))), math.Sqrt(b + 1)
}

// capped squashes e when its bound exceeds capBound.
func (g *fnGen) capped(e ast.Expr, b float64) (ast.Expr, float64) {
	if b <= capBound {
		return e, b
	}
	return g.fit(e, b, capBound)
}

// fit returns e squashed to a bound of at most limit (limit >= 1): Tanh,
// a clamp, or a power-of-two scale (exact in float32).
func (g *fnGen) fit(e ast.Expr, b, limit float64) (ast.Expr, float64) {
	if b <= limit {
		return e, b
	}
	switch g.rng.IntN(3) {
	case 0:
		return call("Tanh", e), 1
	case 1:
		c := math.Min(limit, pickOf(g.gen, []float64{1, 2, 4, 8}))
		return call("Minimum", call("Maximum", e, floatLit(-c)), floatLit(c)), c
	}
	k := math.Ceil(math.Log2(b / limit))
	scale := math.Ldexp(1, -int(k))
	return bin(token.MUL, e, floatLit(scale)), b * scale
}
