package fuzz

import (
	"go/ast"
	"go/token"
	"math"
)

// block generates n statements in the current scope. top is true for the
// function's own body (only there are results assigned early).
func (g *fnGen) block(n int, top bool) []ast.Stmt {
	var out []ast.Stmt
	for range n {
		if s := g.stmt(top); s != nil {
			out = append(out, g.before...)
			out = append(out, s)
		}
		g.before = nil
	}
	return out
}

func (g *fnGen) stmt(top bool) ast.Stmt {
	var opts choices[func() ast.Stmt]
	add := opts.add
	var locals, intLocals, unset []*variable
	for _, v := range g.visible() {
		switch {
		case v.kind == paramVar || v.kind == indexVar || v.class:
		case v.isInt:
			intLocals = append(intLocals, v)
		default:
			locals = append(locals, v)
		}
	}
	for _, r := range g.results {
		if !r.set && !r.isInt {
			unset = append(unset, r)
		}
	}
	nested := g.depth < g.cfg.MaxDepth && g.cfg.MaxDepth > 0
	add(4, true, g.defineFloat)
	add(1, g.has(FeatIntLocals), func() ast.Stmt {
		e := g.intExpr(2)
		name := g.fresh("k")
		g.declare(&variable{name: name, kind: localVar, isInt: true, loop: g.loop})
		return assign(name, token.DEFINE, e)
	})
	add(3, g.has(FeatReassign) && len(locals) > 0, func() ast.Stmt { return g.reassign(pickOf(g.gen, locals)) })
	add(1, g.has(FeatReassign) && len(intLocals) > 0, func() ast.Stmt {
		return assign(pickOf(g.gen, intLocals).name, token.ASSIGN, g.intExpr(2))
	})
	add(2, g.has(FeatCompound) && len(locals) > 0, func() ast.Stmt { return g.compound(pickOf(g.gen, locals)) })
	add(2, g.has(FeatReassign) && len(locals) > 0, func() ast.Stmt { return g.reuse(pickOf(g.gen, locals)) })
	add(1, g.has(FeatCompound) && len(intLocals) > 0, func() ast.Stmt {
		tok := pickOf(g.gen, []token.Token{token.ADD_ASSIGN, token.SUB_ASSIGN, token.MUL_ASSIGN})
		return assign(pickOf(g.gen, intLocals).name, tok, g.intExpr(1))
	})
	add(2, nested && (g.has(FeatFor) || (g.has(FeatForParam) && len(g.ints) > 0) || g.has(FeatForLocal)), g.forStmt)
	add(2, nested && g.has(FeatIf), g.ifStmt)
	add(1, top && g.has(FeatEarlyResults) && len(g.aliasable(unset)) > 0, func() ast.Stmt {
		// A result that starts as a parameter's value (`r = p`) and is
		// updated later: the executor's output buffer must not be the
		// input's, nor an update reach the input.
		pair := pickOf(g.gen, g.aliasable(unset))
		r, p := pair[0], pair[1]
		r.bound, r.loop = math.Max(p.bound, 1), 0
		g.markSet(r)
		return assign(r.name, token.ASSIGN, ident(p.name))
	})
	add(2, top && g.has(FeatEarlyResults) && len(unset) > 0, func() ast.Stmt {
		r := pickOf(g.gen, unset)
		e, b := g.expr(r.shp, g.cfg.MaxExprDepth)
		r.bound, r.loop = math.Max(b, 1), 0
		g.markSet(r)
		return assign(r.name, token.ASSIGN, e)
	})
	return opts.draw(g.gen)()
}

// defineFloat declares a new float local of a candidate shape.
func (g *fnGen) defineFloat() ast.Stmt {
	s := pickOf(g.gen, g.candidateShapes())
	e, b := g.expr(s, 1+g.rng.IntN(g.cfg.MaxExprDepth))
	name := g.fresh("t")
	g.declare(&variable{name: name, kind: localVar, shp: s, bound: math.Max(b, 1), loop: g.loop})
	return assign(name, token.DEFINE, e)
}

// settle records a new value of bound b for v: inside a loop that v was
// declared outside of, the value must fit v's bound (so nothing grows
// with the trip count); otherwise v takes the new bound.
func (g *fnGen) settle(v *variable, e ast.Expr, b float64) ast.Expr {
	if v.loop < g.loop {
		e, _ = g.fit(e, b, v.bound)
		return e
	}
	v.bound = math.Max(b, 1)
	return e
}

// sameShape returns the float variables in scope, other than v, of v's
// shape (parameters included, classes and indexes not).
func (g *fnGen) sameShape(v *variable) []*variable {
	var out []*variable
	for _, w := range g.visible() {
		if w != v && !w.isInt && !w.class && w.kind != indexVar && w.shp.eq(v.shp) {
			out = append(out, w)
		}
	}
	return out
}

// aliasable pairs each unset float result with a parameter of its shape.
func (g *fnGen) aliasable(unset []*variable) [][2]*variable {
	var out [][2]*variable
	for _, r := range unset {
		for _, w := range g.sameShape(r) {
			if w.kind == paramVar {
				out = append(out, [2]*variable{r, w})
			}
		}
	}
	return out
}

// reuse writes v's new value where v's own buffer is also an operand or
// another variable's buffer becomes v's: v = w (a copy, a parameter's
// included, which a later in-place update of v must not reach), or an
// update of v from itself, elementwise (v = Tanh(v), v = Abs(v),
// v = Relu(v), v = v * 0.5, v = Maximum(v, w)) or as a reduction kept
// to v's shape (v = v - Mean(v, axis, true)). None of them grows v, so
// they are safe in loops.
func (g *fnGen) reuse(v *variable) ast.Stmt {
	same := g.sameShape(v)
	if len(same) > 0 && g.chance(3) {
		w := pickOf(g.gen, same)
		return assign(v.name, token.ASSIGN, g.settle(v, ident(w.name), w.bound))
	}
	x := ident(v.name)
	var opts choices[func() ast.Expr]
	opts.add(2, g.has(FeatTanh), func() ast.Expr { return call("Tanh", x) })
	opts.add(1, g.has(FeatAbs), func() ast.Expr { return call("Abs", x) })
	opts.add(1, g.has(FeatRelu), func() ast.Expr { return call("Relu", x) })
	opts.add(1, g.has(FeatSigmoid), func() ast.Expr { return call("Sigmoid", x) })
	opts.add(1, g.has(FeatMaxMin) && len(same) > 0, func() ast.Expr {
		w := pickOf(g.gen, same)
		if w.bound > v.bound {
			return call("Minimum", x, call("Tanh", ident(w.name)))
		}
		return call(g.pick([]string{"Maximum", "Minimum"}), x, ident(w.name))
	})
	opts.add(1, g.has(FeatReduce) && g.has(FeatKeepDims) && len(v.shp) > 0, func() ast.Expr {
		// |v - Mean(v)| <= 2|v|: halved, it keeps v's bound.
		a := g.rng.IntN(len(v.shp))
		m := call("Mean", x, g.axis(a, len(v.shp)), ident("true"))
		return bin(token.MUL, bin(token.SUB, x, m), floatLit(0.5))
	})
	opts.add(1, true, func() ast.Expr { return bin(token.MUL, x, floatLit(0.5)) })
	return assign(v.name, token.ASSIGN, opts.draw(g.gen)())
}

func (g *fnGen) reassign(v *variable) ast.Stmt {
	e, b := g.expr(v.shp, 1+g.rng.IntN(g.cfg.MaxExprDepth))
	return assign(v.name, token.ASSIGN, g.settle(v, e, b))
}

// compound generates v op= e, falling back to a plain reassignment when
// the compound form could outgrow v's bound in a loop.
func (g *fnGen) compound(v *variable) ast.Stmt {
	carried := v.loop < g.loop
	if carried {
		// v op= f(v) carried around a loop multiplies v's relative error
		// every trip (v *= v doubles it): after 16 trips float32 and
		// float64 legitimately differ beyond any useful tolerance.
		return g.reassign(v)
	}
	switch g.rng.IntN(4) {
	case 0: // v /= Abs(y) + 1 never grows
		y, _ := g.operand(v.shp, 1)
		return assign(v.name, token.QUO_ASSIGN, bin(token.ADD, call("Abs", y), floatLit(1)))
	case 1: // v *= y with |y| <= 1 never grows
		y, by := g.operand(v.shp, 1)
		if by > 1 {
			y = call("Tanh", y)
		}
		return assign(v.name, token.MUL_ASSIGN, y)
	}
	y, by := g.operand(v.shp, 1)
	if v.bound+by > capBound {
		return g.reassign(v)
	}
	v.bound += by
	return assign(v.name, pickOf(g.gen, []token.Token{token.ADD_ASSIGN, token.SUB_ASSIGN}), y)
}

// forStmt generates a loop over a constant, a literal, an int64
// parameter or (FeatForLocal) an int64 local declared just before the
// loop, which the body assigns.
func (g *fnGen) forStmt() ast.Stmt {
	var count ast.Expr
	var local *variable
	var decl ast.Stmt
	switch {
	case g.has(FeatForLocal) && ((!g.has(FeatFor) && !(g.has(FeatForParam) && len(g.ints) > 0)) || g.chance(3)):
		// Declared before the body is generated, so that the body's
		// other statements may read it too.
		init := g.countInit()
		local = g.declare(&variable{name: g.fresh("n"), kind: localVar, isInt: true, loop: g.loop})
		decl = assign(local.name, token.DEFINE, init)
		count = ident(local.name)
	case g.has(FeatForParam) && len(g.ints) > 0 && (!g.has(FeatFor) || g.chance(2)):
		count = ident(pickOf(g.gen, g.ints).name)
	case g.chance(2):
		v := int64(g.rng.IntN(5))
		if name := g.constFor(v); name != "" {
			count = ident(name)
		} else {
			count = intLit(v)
		}
	default:
		count = intLit(int64(1 + g.rng.IntN(4)))
		if g.chance(10) {
			count = intLit(0)
		}
	}
	g.depth++
	g.loop++
	g.push()
	rs := &ast.RangeStmt{X: count}
	var index *variable
	if !g.chance(6) {
		name := g.fresh("i")
		index = g.declare(&variable{name: name, kind: indexVar, isInt: true, loop: g.loop})
		rs.Key, rs.Tok = ident(name), token.DEFINE
	}
	// The body assigns a local count first or last (an update written
	// where the names it reads are in scope), and may assign it again.
	var body []ast.Stmt
	first := local != nil && g.chance(2)
	if first {
		body = append(body, g.countUpdate(local, index))
	}
	body = append(body, g.block(1+g.rng.IntN(3), false)...)
	if local != nil && !first {
		body = append(body, g.countUpdate(local, index))
	}
	rs.Body = &ast.BlockStmt{List: body}
	g.pop()
	g.loop--
	g.depth--
	if decl != nil {
		// After the body: block writes before when the statement that
		// holds it is done, and the body's blocks would take it first.
		g.before = append(g.before, decl)
	}
	return rs
}

// countInit is the initial value of a loop's local count, small whatever
// the integers around it hold (|n| <= 7), so that nested loops stay
// short: a literal or constant, an int64 parameter plus a literal (n :=
// k + 2) or a remainder (n := CheckedRem(e, 4)).
func (g *fnGen) countInit() ast.Expr {
	var opts choices[func() ast.Expr]
	opts.add(2, true, func() ast.Expr {
		v := int64(g.rng.IntN(6) - 1)
		if name := g.constFor(v); name != "" && v >= 0 && g.chance(2) {
			return ident(name)
		}
		return intLit(v)
	})
	opts.add(2, len(g.ints) > 0, func() ast.Expr {
		return bin(pickOf(g.gen, []token.Token{token.ADD, token.SUB}), ident(pickOf(g.gen, g.ints).name), intLit(int64(1+g.rng.IntN(2))))
	})
	opts.add(1, true, func() ast.Expr {
		return call("CheckedRem", g.intExpr(1), intLit(int64(3+g.rng.IntN(3))))
	})
	return opts.draw(g.gen)()
}

// countUpdate assigns the loop's local count n inside its body: the trips
// stay what n was before the loop, whatever n becomes. The updates keep n
// small; most of them shrink it, so that an executor that re-reads the
// count every trip still ends, with fewer trips.
func (g *fnGen) countUpdate(n, index *variable) ast.Stmt {
	x := ident(n.name)
	var opts choices[func() ast.Expr]
	opts.add(3, true, func() ast.Expr { return bin(token.SUB, x, intLit(1)) })
	opts.add(1, true, func() ast.Expr { return bin(token.ADD, x, intLit(1)) })
	opts.add(1, true, func() ast.Expr { return intLit(0) })
	opts.add(1, index != nil, func() ast.Expr { return ident(index.name) })
	opts.add(1, true, func() ast.Expr { return call("CheckedRem", bin(token.ADD, x, g.intLeaf()), intLit(3)) })
	if g.has(FeatCompound) && g.chance(3) {
		return assign(n.name, token.SUB_ASSIGN, intLit(1))
	}
	return assign(n.name, token.ASSIGN, opts.draw(g.gen)())
}

// ifStmt generates if / else if / else on an integer condition. A
// variable assigned in a branch leaves with the greater of the branches'
// bounds.
func (g *fnGen) ifStmt() ast.Stmt {
	g.depth++
	defer func() { g.depth-- }()
	before := g.bounds()
	s := &ast.IfStmt{Cond: g.cond(2)}
	s.Body = g.branch()
	after := []map[*variable]float64{g.bounds()}
	tail := s
	for g.has(FeatElseIf) && g.chance(3) {
		g.restore(before)
		next := &ast.IfStmt{Cond: g.cond(2)}
		next.Body = g.branch()
		after = append(after, g.bounds())
		tail.Else = next
		tail = next
	}
	g.restore(before)
	if g.chance(2) {
		tail.Else = g.branch()
	} else {
		after = append(after, before)
	}
	after = append(after, g.bounds())
	for v := range before {
		for _, m := range after {
			v.bound = math.Max(v.bound, m[v])
		}
	}
	return s
}

func (g *fnGen) branch() *ast.BlockStmt {
	g.push()
	defer g.pop()
	return &ast.BlockStmt{List: g.block(1+g.rng.IntN(3), false)}
}

func (g *fnGen) bounds() map[*variable]float64 {
	m := map[*variable]float64{}
	for _, v := range g.visible() {
		m[v] = v.bound
	}
	return m
}

func (g *fnGen) restore(m map[*variable]float64) {
	for v, b := range m {
		v.bound = b
	}
}

// intExpr generates an int64 scalar expression at most d operators deep.
func (g *fnGen) intExpr(d int) ast.Expr {
	if d <= 0 || g.chance(3) {
		return g.intLeaf()
	}
	switch g.rng.IntN(6) {
	case 0:
		return bin(token.ADD, g.intExpr(d-1), g.intExpr(d-1))
	case 1:
		return bin(token.SUB, g.intExpr(d-1), g.intExpr(d-1))
	case 2:
		return bin(token.MUL, g.intExpr(d-1), g.intExpr(d-1))
	case 3:
		return neg(g.intExpr(d - 1))
	}
	name := g.pick([]string{"CheckedRem", "CheckedDiv"})
	var den ast.Expr
	if g.has(FeatMayFail) && g.rng.Float64() < g.cfg.FailRate {
		den = g.intExpr(d - 1)
	} else {
		den = intLit(pickOf(g.gen, []int64{1, 2, 3, 5, -2, -1}))
	}
	return call(name, g.intExpr(d-1), den)
}

func (g *fnGen) intLeaf() ast.Expr {
	vs := g.intVars()
	r := g.rng.IntN(8)
	if g.has(FeatClassSteer) && g.chance(6) {
		// A class index steering integer control flow. It is the Argmax of
		// a parameter, which every executor holds as the same float32
		// values, so no rounding can flip it between executors (an
		// intermediate's Argmax could, at a near-tie, and then the paths
		// would differ for a reason that is not a bug).
		var rank1 []*variable
		for _, v := range g.visible() {
			if v.kind == paramVar && !v.isInt && len(v.shp) == 1 {
				rank1 = append(rank1, v)
			}
		}
		if len(rank1) > 0 {
			return call("Argmax", ident(pickOf(g.gen, rank1).name), intLit(0))
		}
	}
	switch {
	case r < 4 && len(vs) > 0:
		return ident(pickOf(g.gen, vs).name)
	case r == 4 && len(g.consts) > 0:
		return ident(pickOf(g.gen, g.consts).name)
	case r == 5 && g.has(FeatWrap):
		return intLit(pickOf(g.gen, []int64{math.MaxInt64, math.MinInt64, math.MaxInt64 - 1}))
	}
	return intLit(int64(g.rng.IntN(7) - 2))
}

var comparisons = []token.Token{token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ}

// cond generates a condition: comparisons of integer expressions
// (typically checked arithmetic of loop indices), joined by && || !.
func (g *fnGen) cond(d int) ast.Expr {
	if d > 0 && g.chance(3) {
		switch g.rng.IntN(3) {
		case 0:
			return bin(token.LAND, g.cond(d-1), g.cond(d-1))
		case 1:
			return bin(token.LOR, g.cond(d-1), g.cond(d-1))
		}
		return not(g.cond(d - 1))
	}
	var idx []*variable
	for _, v := range g.intVars() {
		if v.kind == indexVar {
			idx = append(idx, v)
		}
	}
	if len(idx) > 0 && g.chance(2) {
		i := ident(pickOf(g.gen, idx).name)
		m := intLit(int64(2 + g.rng.IntN(3)))
		lhs := call(g.pick([]string{"CheckedRem", "CheckedDiv"}), i, m)
		return bin(pickOf(g.gen, comparisons), lhs, intLit(int64(g.rng.IntN(3))))
	}
	return bin(pickOf(g.gen, comparisons), g.intExpr(1), g.intExpr(1))
}
