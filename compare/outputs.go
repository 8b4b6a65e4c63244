package compare

import (
	"slices"
	"sort"
	"strings"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Tolerances returns the tolerance of every float result of fn: the file's
// last //rx:tolerance without for= for that output if there is one, def
// otherwise. Directives for named executors (for=) are left out; see
// TolerancesFor.
func Tolerances(f *program.File, fn *program.Func, def Tolerance) map[string]Tolerance {
	return TolerancesFor(f, fn, def, "")
}

// TolerancesFor returns the tolerance of every float result of fn when
// executor's outputs are judged: the last //rx:tolerance for that output
// whose for= list names executor if there is one, else the last one
// without for=, else def. An executor named "" takes only directives
// without for=.
func TolerancesFor(f *program.File, fn *program.Func, def Tolerance, executor string) map[string]Tolerance {
	out := map[string]Tolerance{}
	for _, r := range fn.Results {
		if r.Type.DType != ir.Float32 {
			continue
		}
		out[r.Name] = def
		named := false
		for _, t := range f.Tolerances {
			if t.Output != r.Name || !t.AppliesTo(executor) || (named && t.Executors == nil) {
				continue
			}
			named = t.Executors != nil
			out[r.Name] = Tolerance{RTol: t.RTol, ATol: t.ATol, ULP: t.ULP, UseULP: t.HasULP, NoAbsRel: !t.HasAbsRel, SignedZeros: def.SignedZeros}
		}
		if f.SignedZeros {
			t := out[r.Name]
			t.SignedZeros = true
			out[r.Name] = t
		}
	}
	return out
}

// ClassSource is where an int64 result came from: Argmax(Scores, Axis)
// with scores a float result of the same function.
type ClassSource struct {
	Scores string // the float result the classes are the Argmax of
	Axis   int
	// Final: Scores is never assigned after (or in a loop with) an
	// assignment to the classes, so the returned Scores are the very
	// scores the classes were taken from, and an executor's classes can be
	// checked against its own returned scores.
	Final bool
}

// ClassSources finds, for each int64 result of fn, the float result it is
// the Argmax of (every assignment to it must be Argmax(R, axis) of the same
// float result R and axis). Those results are compared with the near-tie
// rule against the oracle's R; other int64 results are compared exactly.
func ClassSources(fn *program.Func) map[string]ClassSource {
	found := map[string]ClassSource{}
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
	for name, src := range found {
		src.Final = assignedBefore(fn.Body, src.Scores, name)
		found[name] = src
	}
	return found
}

// assignedBefore reports whether every assignment to the result named
// first comes, in source order, before every assignment to the result
// named then, with no loop around both.
func assignedBefore(body []program.Stmt, first, then string) bool {
	type site struct {
		order int
		loops []int
	}
	var firsts, thens []site
	order, loopID := 0, 0
	var walk func([]program.Stmt, []int)
	walk = func(body []program.Stmt, loops []int) {
		for _, s := range body {
			order++
			switch s := s.(type) {
			case *program.Assign:
				at := site{order, loops}
				switch s.Var.Name {
				case first:
					firsts = append(firsts, at)
				case then:
					thens = append(thens, at)
				}
			case *program.For:
				loopID++
				walk(s.Body, append(slices.Clip(loops), loopID))
			case *program.If:
				walk(s.Then, loops)
				walk(s.Else, loops)
			}
		}
	}
	walk(body, nil)
	for _, a := range firsts {
		for _, b := range thens {
			if a.order > b.order {
				return false
			}
			for _, l := range a.loops {
				if slices.Contains(b.loops, l) {
					return false
				}
			}
		}
	}
	return true
}

func argmaxOfResult(e program.Expr) (ClassSource, bool) {
	c, ok := e.(*program.Call)
	if !ok || c.Builtin != program.Argmax || len(c.Args) != 1 {
		return ClassSource{}, false
	}
	ref, ok := c.Args[0].(*program.VarRef)
	if !ok || ref.Var.Kind != program.ResultVar || ref.Var.Type.DType != ir.Float32 {
		return ClassSource{}, false
	}
	return ClassSource{Scores: ref.Var.Name, Axis: c.Axis}, true
}

// Outputs compares every result of fn in got with want (the
// reference's), in result order, and lists outputs got has that fn does
// not declare.
func Outputs(fn *program.Func, want, got map[string]*tensor.Tensor, tols map[string]Tolerance, classes map[string]ClassSource) ([]OutputMetrics, []string) {
	var metrics []OutputMetrics
	declared := map[string]bool{}
	for _, r := range fn.Results {
		declared[r.Name] = true
		w, g := want[r.Name], got[r.Name]
		var m OutputMetrics
		switch {
		case g == nil:
			m = OutputMetrics{Name: r.Name, Problem: "missing: the executor returned no output " + r.Name}
			m.Report = r.Name + ": " + m.Problem
		case r.Type.DType == ir.Int64:
			if src, ok := classes[r.Name]; ok && want[src.Scores] != nil {
				var own *tensor.Tensor
				if src.Final {
					own = got[src.Scores]
				}
				m = ClassesOwn(r.Name, w, g, want[src.Scores], own, src.Axis, tols[src.Scores])
			} else {
				m = ToOracle(r.Name, w, g, Tolerance{})
			}
		default:
			m = ToOracle(r.Name, w, g, tols[r.Name])
		}
		metrics = append(metrics, m)
	}
	var extra []string
	for name := range got {
		if !declared[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	return metrics, extra
}

// Undeclared is the report of outputs an executor returned that its
// function does not declare (the second result of Outputs):
// "the executor returned outputs the function does not declare: a, b".
func Undeclared(extra []string) string {
	return "the executor returned outputs the function does not declare: " + strings.Join(extra, ", ")
}

// ULPs measures every result of fn in got against base.
func ULPs(fn *program.Func, base, got map[string]*tensor.Tensor) []ULPMetrics {
	var out []ULPMetrics
	for _, r := range fn.Results {
		if base[r.Name] == nil || got[r.Name] == nil {
			continue
		}
		out = append(out, ULP(r.Name, base[r.Name], got[r.Name]))
	}
	return out
}
