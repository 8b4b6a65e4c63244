package program

import (
	"go/ast"
	"go/token"

	"github.com/rextio/rxeq/program/ir"
)

// ParseScenario is Parse with the rules a file must also meet to run as a
// scenario, the way `rxeq run` and `rxeq check` take it (with no dims bound
// from outside, as the library's harness.Options.Dims can):
//
//   - it declares at least one function (a file with only a package clause
//     runs nothing, which is a mistake, not a pass);
//   - every parameter of every function has an //rx:input directive, since
//     the inputs are generated from them;
//   - every parameter is a float32 tensor or an int64 scalar, the values the
//     generators make (an int64 tensor parameter is for the library, which
//     passes its own inputs);
//   - a function has at most one free symbolic dimension, the batch one
//     (BatchSymbol), which //rx:batches binds; any other has no value;
//   - every local a function declares with := is read somewhere after
//     (Go's "declared and not used"; loop variables and results are
//     exempt, as a lock may name a loop variable the body does not read).
//
// The errors come in one ErrorList with the checker's, sorted by position.
// Scenario rules are not checked on a function that has checker errors.
func ParseScenario(filename string, src []byte) (*File, error) {
	return parse(filename, src, true)
}

// checkScenario applies ParseScenario's rules to the checked file.
func (c *checker) checkScenario(f *ast.File, ok map[*Func]bool) {
	if len(c.file.Funcs) == 0 && len(c.funcNames) == 0 {
		c.errorf(f.Package, "no scoring function: a scenario needs at least one func, like func score(x [B][F]float32) (y [B][C]float32)")
		return
	}
	checked := map[string]bool{}
	for _, fn := range c.file.Funcs {
		if ok[fn] {
			checked[fn.Name] = true
		}
	}
	for _, d := range f.Decls {
		if fd, isFunc := d.(*ast.FuncDecl); isFunc && checked[fd.Name.Name] && fd.Body != nil {
			c.checkUnused(fd.Body.List)
		}
	}
	for _, fn := range c.file.Funcs {
		if !ok[fn] {
			continue
		}
		for _, p := range fn.Params {
			switch {
			case p.Type.DType == ir.Int64 && p.Type.Rank() > 0:
				c.errorAt(p.Pos, "parameter %s of %s is an int64 tensor (%s): a scenario's inputs are generated, as float32 tensors or int64 scalars only", p.Name, fn.Name, p.Type)
			case !c.inputNamed[p.Name] && p.Type.DType == ir.Int64:
				c.errorAt(p.Pos, "parameter %s of %s has no //rx:input directive: add one like //rx:input %s const(4)", p.Name, fn.Name, p.Name)
			case !c.inputNamed[p.Name]:
				c.errorAt(p.Pos, "parameter %s of %s has no //rx:input directive: add one like //rx:input %s normal(0, 1)", p.Name, fn.Name, p.Name)
			}
		}
		batch := fn.BatchSymbol()
		for _, s := range fn.Syms {
			if s == batch {
				continue
			}
			c.errorAt(fn.symPos[s], "symbolic dimension %s of %s has no value when it runs: only the batch dimension %s takes its sizes (from //rx:batches); give %s a size, like const %s = 16", s, fn.Name, batch, s, s)
		}
	}
}

// checkUnused reports every local that a statement of stmts (or of a
// block nested in them) declares with := and nothing after it reads, as
// Go does: "declared and not used: eps". Assigning to a local is not a
// use; reading it anywhere later in its block is.
func (c *checker) checkUnused(stmts []ast.Stmt) {
	for i, st := range stmts {
		switch s := st.(type) {
		case *ast.AssignStmt:
			if s.Tok != token.DEFINE {
				continue
			}
			for _, l := range s.Lhs {
				id, isIdent := l.(*ast.Ident)
				if !isIdent || id.Name == "_" {
					continue
				}
				if !readIn(stmts[i+1:], id.Name) {
					c.errorf(id.Pos(), "declared and not used: %s", id.Name)
				}
			}
		case *ast.BlockStmt:
			c.checkUnused(s.List)
		case *ast.ForStmt:
			c.checkUnused(s.Body.List)
		case *ast.RangeStmt:
			c.checkUnused(s.Body.List)
		case *ast.IfStmt:
			c.checkIfUnused(s)
		}
	}
}

func (c *checker) checkIfUnused(s *ast.IfStmt) {
	c.checkUnused(s.Body.List)
	switch e := s.Else.(type) {
	case *ast.BlockStmt:
		c.checkUnused(e.List)
	case *ast.IfStmt:
		c.checkIfUnused(e)
	}
}

// readIn reports whether any of stmts reads the identifier name: every
// occurrence counts except the left-hand side of an assignment.
func readIn(stmts []ast.Stmt, name string) bool {
	found := false
	for _, st := range stmts {
		ast.Inspect(st, func(n ast.Node) bool {
			if found {
				return false
			}
			if a, isAssign := n.(*ast.AssignStmt); isAssign {
				for _, r := range a.Rhs {
					ast.Inspect(r, func(m ast.Node) bool {
						if id, ok := m.(*ast.Ident); ok && id.Name == name {
							found = true
						}
						return !found
					})
				}
				for _, l := range a.Lhs {
					if _, isIdent := l.(*ast.Ident); !isIdent {
						ast.Inspect(l, func(m ast.Node) bool {
							if id, ok := m.(*ast.Ident); ok && id.Name == name {
								found = true
							}
							return !found
						})
					}
				}
				return false
			}
			if id, ok := n.(*ast.Ident); ok && id.Name == name {
				found = true
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}
