package scenarios_test

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/scenarios"
	"github.com/rextio/rxeq/tensor"
)

// The edge classes each op must meet somewhere in the catalog (issue 15:
// every op, every edge). A float class is an edge(KIND) input; the integer
// classes are int64 inputs that are negative, or at least 2^40 in
// magnitude. An op meets a class when one of its operands is computed
// from an input of that class.
var requiredEdges = map[string][]string{
	"MatMul": {"specials"}, "Transpose": {"specials"},
	"Tanh": {"specials", "overflow", "huge"}, "Exp": {"specials", "overflow"},
	"Log": {"specials"}, "Sigmoid": {"specials", "overflow"}, "Relu": {"specials"},
	"Abs": {"specials"}, "Sqrt": {"specials"},
	"Maximum": {"specials", "huge"}, "Minimum": {"specials"},
	"Softmax": {"specials", "overflow", "ties"}, "LogSoftmax": {"specials", "overflow"},
	"Sum": {"specials"}, "Mean": {"specials"}, "Max": {"specials", "ties"},
	"Argmax":     {"specials", "ties"},
	"CheckedRem": {"negative-int", "extreme-int"}, "CheckedDiv": {"negative-int", "extreme-int"},
	"neg": {"specials"},
	"+":   {"specials", "huge", "extreme-int"}, "-": {"specials", "extreme-int"},
	"*": {"specials", "huge", "extreme-int"}, "/": {"specials", "huge"},
	"==": {"negative-int", "extreme-int"}, "!=": {"negative-int"}, "<": {"negative-int", "extreme-int"},
	"<=": {"negative-int"}, ">": {"negative-int", "extreme-int"}, ">=": {"negative-int"},
	"&&": {"negative-int"}, "||": {"negative-int"}, "!": {"negative-int"},
}

var binaryNames = map[program.BinaryOp]string{
	program.Add: "+", program.Sub: "-", program.Mul: "*", program.Div: "/",
	program.Eq: "==", program.Ne: "!=", program.Lt: "<", program.Le: "<=", program.Gt: ">", program.Ge: ">=",
	program.AndAnd: "&&", program.OrOr: "||",
}

// inputClasses returns the edge classes of a parameter's //rx:input.
func inputClasses(f *program.File, p *program.Var) []string {
	d, ok := f.Input(p.Name)
	if !ok {
		return nil
	}
	if p.Type.DType == ir.Int64 {
		var out []string
		if d.Kind == tensor.Const && d.A < 0 {
			out = append(out, "negative-int")
		}
		if d.Kind == tensor.Const && math.Abs(d.A) >= 1<<40 {
			out = append(out, "extreme-int")
		}
		return out
	}
	if d.Kind == tensor.Edge {
		return []string{d.Edge}
	}
	return nil
}

// coverage walks every function of the catalog and returns, per op, the
// edge classes its operands are computed from.
func coverage(files []*program.File) map[string]map[string]bool {
	cov := map[string]map[string]bool{}
	for _, f := range files {
		for _, fn := range f.Funcs {
			taint := map[*program.Var]map[string]bool{}
			for _, p := range fn.Params {
				taint[p] = map[string]bool{}
				for _, c := range inputClasses(f, p) {
					taint[p][c] = true
				}
			}
			var classesOf func(e program.Expr) map[string]bool
			note := func(op string, args ...program.Expr) map[string]bool {
				all := map[string]bool{}
				for _, a := range args {
					for c := range classesOf(a) {
						all[c] = true
					}
				}
				if cov[op] == nil {
					cov[op] = map[string]bool{}
				}
				for c := range all {
					cov[op][c] = true
				}
				return all
			}
			classesOf = func(e program.Expr) map[string]bool {
				switch e := e.(type) {
				case *program.VarRef:
					return taint[e.Var]
				case *program.Unary:
					if e.Op == program.Not {
						return note("!", e.X)
					}
					return note("neg", e.X)
				case *program.Binary:
					return note(binaryNames[e.Op], e.X, e.Y)
				case *program.Call:
					return note(e.Builtin.String(), e.Args...)
				}
				return nil
			}
			var walk func([]program.Stmt)
			walk = func(body []program.Stmt) {
				for _, s := range body {
					switch s := s.(type) {
					case *program.Assign:
						cs := classesOf(s.Value)
						if taint[s.Var] == nil {
							taint[s.Var] = map[string]bool{}
						}
						for c := range cs {
							taint[s.Var][c] = true
						}
					case *program.For:
						classesOf(s.Count)
						walk(s.Body)
						walk(s.Body) // a second pass carries taint around the loop
					case *program.If:
						classesOf(s.Cond)
						walk(s.Then)
						walk(s.Else)
					case *program.Return:
						for _, v := range s.Values {
							classesOf(v)
						}
					}
				}
			}
			walk(fn.Body)
		}
	}
	return cov
}

var _ = Describe("the op-edge catalog", func() {
	It("meets every op of the language with the edge classes that matter to it", func() {
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		cov := coverage(files)

		// Every builtin the checker knows needs a row: a new op fails here
		// until the catalog covers it.
		for b := program.Builtin(1); b.String() != "invalid"; b++ {
			Expect(requiredEdges).To(HaveKey(b.String()), "builtin %s has no required edge classes: add it to requiredEdges and to scenarios/op_edges.rx", b)
		}
		for op := program.Add; op <= program.OrOr; op++ {
			Expect(binaryNames).To(HaveKey(op))
		}

		var table []string
		var missing []string
		ops := make([]string, 0, len(requiredEdges))
		for op := range requiredEdges {
			ops = append(ops, op)
		}
		sort.Strings(ops)
		for _, op := range ops {
			var have []string
			for c := range cov[op] {
				have = append(have, c)
			}
			sort.Strings(have)
			table = append(table, fmt.Sprintf("%-10s %s", op, strings.Join(have, " ")))
			for _, want := range requiredEdges[op] {
				if !slices.Contains(have, want) {
					missing = append(missing, op+" × "+want)
				}
			}
		}
		AddReportEntry("op × edge classes the catalog covers", strings.Join(table, "\n"))
		Expect(missing).To(BeEmpty(), "op × edge class pairs the catalog does not cover")
	})

	It("uses shapes that are no multiple of a vector width", func() {
		f, err := scenarios.Lookup("op-edges")
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Batches).To(ContainElements(1, 3, 17, 33))
		for _, fn := range f.Funcs {
			for _, p := range fn.Params {
				for _, d := range p.Type.Shape {
					if !d.IsSym() {
						Expect(d.Size%4).NotTo(BeZero(), "%s.%s has a dimension of %d", fn.Name, p.Name, d.Size)
					}
				}
			}
		}
	})
})
