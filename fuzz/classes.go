package fuzz

import (
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
)

// classSource is where an int64 result came from: Argmax(scores, axis)
// with scores a float result of the same function.
type classSource struct {
	scores string
	axis   int
}

// classSources finds, for each int64 result of fn, the float result it is
// the Argmax of: every assignment to it must be Argmax(R, axis) of the
// same float result R and axis, and a return with values must return it
// unchanged. The same rule as the harness's runner, so a class is judged
// the same way by both.
func classSources(fn *program.Func) map[string]classSource {
	found := map[string]classSource{}
	bad := map[string]bool{}
	var walk func([]program.Stmt)
	walk = func(body []program.Stmt) {
		for _, s := range body {
			switch s := s.(type) {
			case *program.Assign:
				if s.Var.Kind != program.ResultVar || s.Var.Type.DType != ir.Int64 {
					continue
				}
				src, ok := argmaxOfResult(s.Value)
				if prev, seen := found[s.Var.Name]; !ok || (seen && prev != src) {
					bad[s.Var.Name] = true
					continue
				}
				found[s.Var.Name] = src
			case *program.For:
				walk(s.Body)
			case *program.If:
				walk(s.Then)
				walk(s.Else)
			case *program.Return:
				for i, v := range s.Values {
					if i < len(fn.Results) && fn.Results[i].Type.DType == ir.Int64 {
						if ref, ok := v.(*program.VarRef); !ok || ref.Var != fn.Results[i] {
							bad[fn.Results[i].Name] = true
						}
					}
				}
			}
		}
	}
	walk(fn.Body)
	for name := range bad {
		delete(found, name)
	}
	return found
}

func argmaxOfResult(e program.Expr) (classSource, bool) {
	c, ok := e.(*program.Call)
	if !ok || c.Builtin != program.Argmax || len(c.Args) != 1 {
		return classSource{}, false
	}
	ref, ok := c.Args[0].(*program.VarRef)
	if !ok || ref.Var.Kind != program.ResultVar || ref.Var.Type.DType != ir.Float32 {
		return classSource{}, false
	}
	return classSource{scores: ref.Var.Name, axis: c.Axis}, true
}
