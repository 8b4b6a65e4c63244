package fuzz

import (
	"go/ast"
	"go/token"
	"math"
	"strconv"
)

// capBound is the greatest magnitude bound an expression may have before
// it is squashed: products of two capped values stay near 256, where
// float32 rounding (about 1.5e-5 absolute) is well inside the tolerance.
const capBound = 16

type varKind uint8

const (
	paramVar varKind = iota + 1
	resultVar
	localVar
	indexVar
)

// variable is a name in scope while a function is generated.
type variable struct {
	name  string
	kind  varKind
	isInt bool
	shp   shape   // float variables
	bound float64 // float variables: an upper bound on |value|
	loop  int     // the loop depth it was declared at
	set   bool    // results: assigned (at top level) so far
	class bool    // results: an Argmax class output
}

// fnGen holds the state of generating one function.
type fnGen struct {
	*gen
	k       int
	dims    []dim // every dimension of the parameters: the universe of shapes
	scopes  [][]*variable
	n       int // counter for fresh names
	loop    int // loop nesting depth
	depth   int // for/if nesting depth
	results []*variable
	ints    []*variable // int64 parameters
	classOf *variable   // the float result the class result is the Argmax of
	// before holds statements that must come just before the statement
	// being generated (a loop's local count); block writes them.
	before []ast.Stmt

	floatCache []*variable // floats(), until the scope changes
}

func (g *fnGen) push() { g.scopes = append(g.scopes, nil); g.floatCache = nil }
func (g *fnGen) pop()  { g.scopes = g.scopes[:len(g.scopes)-1]; g.floatCache = nil }

func (g *fnGen) declare(v *variable) *variable {
	g.scopes[len(g.scopes)-1] = append(g.scopes[len(g.scopes)-1], v)
	g.floatCache = nil
	return v
}

// markSet records that result r is assigned from now on.
func (g *fnGen) markSet(r *variable) {
	r.set = true
	g.floatCache = nil
}

func (g *fnGen) fresh(prefix string) string {
	g.n++
	return prefix + strconv.Itoa(g.n-1)
}

// visible returns the variables in scope that can be read: every
// parameter, local and index, and the results assigned so far.
func (g *fnGen) visible() []*variable {
	var out []*variable
	for _, sc := range g.scopes {
		for _, v := range sc {
			if v.kind != resultVar || v.set {
				out = append(out, v)
			}
		}
	}
	for _, r := range g.results {
		if r.set {
			out = append(out, r)
		}
	}
	return out
}

func (g *fnGen) floats() []*variable {
	if g.floatCache != nil {
		return g.floatCache
	}
	out := []*variable{}
	for _, v := range g.visible() {
		if !v.isInt && !v.class {
			out = append(out, v)
		}
	}
	g.floatCache = out
	return out
}

func (g *fnGen) intVars() []*variable {
	var out []*variable
	for _, v := range g.visible() {
		if v.isInt && !v.class && len(v.shp) == 0 {
			out = append(out, v)
		}
	}
	return out
}

// params declares the parameters and returns their fields.
func (g *fnGen) params() []*ast.Field {
	// The universe: the batch and one to three constant dimensions.
	consts := make([]dim, 1+g.rng.IntN(3))
	for i := range consts {
		size := int64(2 + g.rng.IntN(5))
		if g.has(FeatEdges) && !g.chance(3) {
			// Every vector width's body and tail: sizes around 4, 8, 16
			// and 32 floats, up to 40.
			size = pickOf(g.gen, edgeSizes)
		} else if g.chance(12) {
			size = 1
		} else if g.chance(10) {
			// Sizes past one vector of 4, 8 or 16 floats with a tail, so
			// vectorised kernels run both their main and their tail loops.
			size = pickOf(g.gen, []int64{9, 17, 33})
		}
		d := dim{size: size}
		if g.chance(2) {
			d.name = g.constFor(size)
		}
		consts[i] = d
	}
	anyDim := func() dim {
		if g.chance(4) {
			return dim{sym: true}
		}
		return pickOf(g.gen, consts)
	}
	maxRank := 2
	if g.has(FeatRank3) {
		maxRank = 3
	}
	var shapes []shape
	first := shape{{sym: true}}
	for range g.rng.IntN(maxRank) {
		first = append(first, pickOf(g.gen, consts))
	}
	shapes = append(shapes, first)
	for range g.rng.IntN(4) {
		var s shape
		if last := shapes[len(shapes)-1]; len(last) == 2 && g.has(FeatMatMul) && g.chance(2) {
			s = shape{last[1], pickOf(g.gen, consts)} // a MatMul partner
		} else {
			for range 1 + g.rng.IntN(maxRank) {
				s = append(s, anyDim())
			}
		}
		shapes = append(shapes, s)
	}
	var fields []*ast.Field
	for j, s := range shapes {
		dist, bound := g.distribution()
		name := string(rune('a'+j)) + strconv.Itoa(g.k)
		g.declare(&variable{name: name, kind: paramVar, shp: s, bound: bound})
		g.inputs = append(g.inputs, inputDef{name, dist})
		fields = append(fields, &ast.Field{Names: []*ast.Ident{ident(name)}, Type: s.typeExpr("float32")})
		for _, d := range s {
			if !containsDim(g.dims, d) {
				g.dims = append(g.dims, d)
			}
		}
	}
	if g.has(FeatForParam) || g.has(FeatIntLocals) {
		for j := range g.rng.IntN(3) {
			name := "n" + strconv.Itoa(g.k) + string(rune('a'+j))
			v := int64(g.rng.IntN(7) - 1)
			g.ints = append(g.ints, g.declare(&variable{name: name, kind: paramVar, isInt: true}))
			g.inputs = append(g.inputs, inputDef{name, "const(" + strconv.FormatInt(v, 10) + ")"})
			fields = append(fields, &ast.Field{Names: []*ast.Ident{ident(name)}, Type: ident("int64")})
		}
	}
	return fields
}

// edgeSizes are the constant dimensions of edge-seeking programs.
var edgeSizes = []int64{1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 39, 40}

func containsDim(ds []dim, d dim) bool {
	for _, e := range ds {
		if e.eq(d) {
			return true
		}
	}
	return false
}

// chooseResults picks the results' types from the shapes the parameters
// can make, so every result can be assigned at the end.
func (g *fnGen) chooseResults() {
	cands := g.candidateShapes()
	for j := range 1 + g.rng.IntN(3) {
		s := pickOf(g.gen, cands)
		g.results = append(g.results, &variable{name: "out" + strconv.Itoa(j), kind: resultVar, shp: s})
	}
	if g.has(FeatArgmax) && g.chance(2) {
		var ranked []*variable
		for _, r := range g.results {
			if len(r.shp) > 0 {
				ranked = append(ranked, r)
			}
		}
		if len(ranked) > 0 {
			r := pickOf(g.gen, ranked)
			axis := g.rng.IntN(len(r.shp))
			g.results = append(g.results, &variable{name: "cls", kind: resultVar, isInt: true, class: true, shp: r.shp.drop(axis),
				bound: float64(axis), loop: -1, set: false})
			g.classOf = r
		}
	}
	if g.has(FeatIntLocals) && g.chance(3) {
		g.results = append(g.results, &variable{name: "cnt", kind: resultVar, isInt: true})
	}
}

// finish assigns the results not yet assigned and returns.
func (g *fnGen) finish() []ast.Stmt {
	var out []ast.Stmt
	var cls *variable
	for _, r := range g.results {
		if r.class {
			cls = r
		}
	}
	if cls == nil && g.has(FeatReturnValues) && g.chance(2) {
		vals := make([]ast.Expr, len(g.results))
		for i, r := range g.results {
			if r.isInt {
				vals[i] = g.intExpr(2)
			} else {
				vals[i], _ = g.expr(r.shp, g.cfg.MaxExprDepth)
			}
		}
		return append(out, &ast.ReturnStmt{Results: vals})
	}
	for _, r := range g.results {
		switch {
		case r.class:
			continue
		case r.isInt:
			out = append(out, assign(r.name, token.ASSIGN, g.intExpr(2)))
		case !r.set || g.chance(3):
			e, b := g.expr(r.shp, g.cfg.MaxExprDepth)
			out = append(out, assign(r.name, token.ASSIGN, e))
			r.bound = math.Max(b, 1)
			g.markSet(r)
		}
	}
	if cls != nil {
		axis := int(cls.bound)
		var axisExpr ast.Expr = intLit(int64(axis))
		if g.chance(4) {
			axisExpr = intLit(int64(axis - len(g.classOf.shp)))
		}
		out = append(out, assign(cls.name, token.ASSIGN, call("Argmax", ident(g.classOf.name), axisExpr)))
	}
	return append(out, &ast.ReturnStmt{})
}

func assign(name string, tok token.Token, e ast.Expr) ast.Stmt {
	return &ast.AssignStmt{Lhs: []ast.Expr{ident(name)}, Tok: tok, Rhs: []ast.Expr{e}}
}
