package program

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
)

// maxErrors bounds how many errors one file reports.
const maxErrors = 50

// Parse parses and checks one .rx file. On failure the error is an
// ErrorList (errors.Is(err, ErrInvalid) holds) with every independent
// problem found, sorted by position, each "file:line:col: message".
//
// A source larger than MaxFileSize is refused before it is parsed, and so
// is one whose brackets nest, or prefix operators chain, far beyond what
// MaxDepth allows (go/parser would recurse once per level); a function
// whose expressions or blocks nest deeper than MaxDepth is reported without
// checking its body. Checking takes time and memory linear in the size of
// the file.
func Parse(filename string, src []byte) (*File, error) {
	return parse(filename, src, false)
}

func parse(filename string, src []byte, scenario bool) (*File, error) {
	if len(src) > MaxFileSize {
		return nil, tooLarge(filename, len(src))
	}
	if errs := prescan(filename, src); errs != nil {
		return nil, errs
	}
	fset := token.NewFileSet()
	astFile, err := parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		var list scanner.ErrorList
		if errors.As(err, &list) {
			out := make(ErrorList, 0, len(list))
			for _, e := range list {
				out = append(out, &Error{Pos: e.Pos, Msg: "syntax error: " + e.Msg + " (an .rx file must be valid Go syntax)"})
			}
			out.sort()
			return nil, out
		}
		return nil, ErrorList{{Pos: token.Position{Filename: filename}, Msg: "syntax error: " + err.Error()}}
	}
	c := &checker{fset: fset, src: src, file: &File{Name: filename, Fset: fset, AST: astFile}, scenario: scenario}
	c.checkFile(astFile)
	if len(c.errs) > 0 {
		c.errs.sort()
		if len(c.errs) > maxErrors {
			c.errs = c.errs[:maxErrors]
		}
		return nil, c.errs
	}
	return c.file, nil
}

// checker holds the state of checking one file.
type checker struct {
	fset *token.FileSet
	src  []byte // the source, for quoting long expressions (exprString)
	file *File
	errs ErrorList

	consts map[string]*Const
	// funcNames holds the name of every func declaration in the file and
	// funcs every checked function by name (in file.Funcs too); params
	// and results map a name to the parameters and results of that name
	// in any function (filled before the directives are read). Lookups
	// through these keep checking linear in the number of functions.
	funcNames map[string]bool
	funcs     map[string]*Func
	params    map[string][]*Var
	results   map[string][]*Var
	// inputNamed holds every parameter an //rx:input names, well-formed
	// or not, and inputPos where each was first given.
	inputNamed map[string]bool
	inputPos   map[string]token.Position
	// scenario turns on the rules of ParseScenario.
	scenario bool
}

func (c *checker) errorf(pos token.Pos, format string, args ...any) {
	c.errorAt(c.fset.Position(pos), format, args...)
}

func (c *checker) errorAt(pos token.Position, format string, args ...any) {
	c.errs = append(c.errs, &Error{Pos: pos, Msg: sprintf(format, args...)})
}

func (c *checker) pos(p token.Pos) token.Position { return c.fset.Position(p) }

// checkFile checks the package-level declarations, then each function,
// then the directives (which refer to parameters and results).
func (c *checker) checkFile(f *ast.File) {
	c.consts = map[string]*Const{}
	for _, imp := range f.Imports {
		c.errorf(imp.Pos(), "imports are not allowed in an .rx file: the builtins (MatMul, Softmax, …) need none")
	}
	var funcs []*ast.FuncDecl
	c.funcNames = map[string]bool{}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			c.checkGenDecl(d)
		case *ast.FuncDecl:
			funcs = append(funcs, d)
			c.funcNames[d.Name.Name] = true
		}
	}
	seen := map[string]*Func{}
	c.funcs = seen
	clean := map[*Func]bool{} // functions checked without an error
	for _, fd := range funcs {
		nerr := len(c.errs)
		fn := c.checkFunc(fd)
		if fn == nil {
			continue
		}
		clean[fn] = len(c.errs) == nerr
		if first, dup := seen[fn.Name]; dup {
			c.errorAt(fn.Pos, "function %s redeclared in this file (first declared at %s)", fn.Name, first.Pos)
			continue
		}
		if _, isConst := c.consts[fn.Name]; isConst {
			c.errorAt(fn.Pos, "function %s has the name of a constant", fn.Name)
			continue
		}
		seen[fn.Name] = fn
		c.file.Funcs = append(c.file.Funcs, fn)
	}
	c.params, c.results = map[string][]*Var{}, map[string][]*Var{}
	for _, fn := range c.file.Funcs {
		for _, p := range fn.Params {
			c.params[p.Name] = append(c.params[p.Name], p)
		}
		for _, r := range fn.Results {
			c.results[r.Name] = append(c.results[r.Name], r)
		}
	}
	c.checkDirectives(f, funcs)
	c.checkSizes()
	if c.scenario {
		c.checkScenario(f, clean)
	}
}

func (c *checker) checkGenDecl(d *ast.GenDecl) {
	if d.Tok != token.CONST {
		c.errorf(d.Pos(), "only const and func declarations are allowed at package level, not %s", d.Tok)
		return
	}
	for _, spec := range d.Specs {
		vs := spec.(*ast.ValueSpec)
		if vs.Type != nil {
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "int64" {
				c.errorf(vs.Type.Pos(), "a constant must be an untyped or int64 integer, like `const F = 32`")
				continue
			}
		}
		if len(vs.Values) != len(vs.Names) {
			c.errorf(vs.Pos(), "each constant needs its own integer value, like `const F = 32`")
			continue
		}
		for i, name := range vs.Names {
			v, ok := c.constValue(vs.Values[i])
			if !ok {
				continue
			}
			if name.Name == "_" {
				continue
			}
			if prev, dup := c.consts[name.Name]; dup {
				c.errorf(name.Pos(), "constant %s redeclared (first declared at %s)", name.Name, prev.Pos)
				continue
			}
			if builtinByName[name.Name] != 0 || isTypeName(name.Name) {
				c.errorf(name.Pos(), "constant %s has the name of a builtin", name.Name)
				continue
			}
			k := &Const{Name: name.Name, Value: v, Pos: c.pos(name.Pos())}
			c.consts[name.Name] = k
			c.file.Consts = append(c.file.Consts, k)
		}
	}
}

// constValue evaluates a constant's value: an integer literal, optionally
// negated, or an earlier constant.
func (c *checker) constValue(e ast.Expr) (int64, bool) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return c.constValue(e.X)
	case *ast.BasicLit:
		if e.Kind != token.INT {
			c.errorf(e.Pos(), "constant value %s is not an integer: constants are integers (dimensions, loop counts, axes)", e.Value)
			return 0, false
		}
		v, err := parseInt(e.Value)
		if err != nil {
			c.errorf(e.Pos(), "integer constant %s does not fit in int64", e.Value)
			return 0, false
		}
		return v, true
	case *ast.UnaryExpr:
		if e.Op == token.SUB {
			v, ok := c.constValue(e.X)
			return -v, ok
		}
	case *ast.Ident:
		if k, ok := c.consts[e.Name]; ok {
			return k.Value, true
		}
		c.errorf(e.Pos(), "undefined constant %s", e.Name)
		return 0, false
	}
	c.errorf(e.Pos(), "constant value must be an integer literal or an earlier constant")
	return 0, false
}
