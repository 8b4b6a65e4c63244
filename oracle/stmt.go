package oracle

import (
	"fmt"

	"github.com/rextio/rxeq/program"
)

// block runs stmts in order. It reports returned=true once a Return has run,
// so enclosing blocks and loops stop too.
func (e *evaluator) block(stmts []program.Stmt) (returned bool, err error) {
	for _, s := range stmts {
		if err := e.ctx.Err(); err != nil {
			return false, fmt.Errorf("%s: %w", e.fn.Name, err)
		}
		returned, err := e.stmt(s)
		if err != nil || returned {
			return returned, err
		}
	}
	return false, nil
}

func (e *evaluator) stmt(s program.Stmt) (bool, error) {
	switch s := s.(type) {
	case *program.Assign:
		v, err := e.expr(s.Value)
		if err != nil {
			return false, err
		}
		if err := checkShape(s.Var.Type, v, e.env); err != nil {
			return false, e.internal("%s: assignment to %s: %v", s.Pos, s.Var.Name, err)
		}
		e.vars[s.Var.ID] = v
		return false, nil
	case *program.For:
		return e.forStmt(s)
	case *program.If:
		cv, err := e.expr(s.Cond)
		if err != nil {
			return false, err
		}
		cond, err := cv.asBool()
		if err != nil {
			return false, e.internal("%s: if condition: %v", s.Pos, err)
		}
		if cond {
			return e.block(s.Then)
		}
		return e.block(s.Else)
	case *program.Return:
		return true, e.returnStmt(s)
	case nil:
		return false, e.internal("nil statement")
	}
	return false, e.internal("unknown statement %T", s)
}

// forStmt evaluates Count once; a count <= 0 runs nothing. The index (if
// any) is set before each iteration, and ctx is checked before each one.
func (e *evaluator) forStmt(s *program.For) (bool, error) {
	cv, err := e.expr(s.Count)
	if err != nil {
		return false, err
	}
	n, err := cv.scalarInt()
	if err != nil {
		return false, e.internal("%s: loop count: %v", s.Pos, err)
	}
	for i := int64(0); i < n; i++ {
		if err := e.ctx.Err(); err != nil {
			return false, fmt.Errorf("%s: %w", e.fn.Name, err)
		}
		if s.Index != nil {
			e.vars[s.Index.ID] = intScalar(i)
		}
		returned, err := e.block(s.Body)
		if err != nil || returned {
			return returned, err
		}
	}
	return false, nil
}

// returnStmt evaluates every value before storing any, so `return b, a`
// swaps. A bare return leaves the results as they are.
func (e *evaluator) returnStmt(s *program.Return) error {
	if s.Values == nil {
		return nil
	}
	if len(s.Values) != len(e.fn.Results) {
		return e.internal("%s: return of %d values for %d results", s.Pos, len(s.Values), len(e.fn.Results))
	}
	vals := make([]*value, len(s.Values))
	for i, x := range s.Values {
		v, err := e.expr(x)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	for i, r := range e.fn.Results {
		e.vars[r.ID] = vals[i]
	}
	return nil
}
