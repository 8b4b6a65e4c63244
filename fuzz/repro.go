package fuzz

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// ErrNoRepro is the kind of the error TorchRepro returns for a finding or
// a program it cannot translate.
var ErrNoRepro = errors.New("no standalone reproducer")

// TorchRepro returns a standalone C++ program over libtorch (ATen) alone
// that reproduces a mismatch finding of the torch executor: it holds the
// reduced program's inputs at the finding's batch and the oracle's
// outputs as literals, computes the function with the ATen ops rxeq's
// torch runtime calls (at::maximum, at::relu, at::amax, …) and exits 1
// when an output disagrees as rxeq judges (a NaN or an infinity of
// another kind, or a finite value beyond rtol 1e-4, atol 3e-6), 0 when
// it agrees. Build and run:
//
//	g++ -std=c++17 -O0 repro.cc -o repro -ltorch_cpu -lc10 && ./repro
//
// It translates straight-line functions of float parameters whose
// statements are assignments of the ops listed in reproOps; anything else
// (loops, branches, int64 values, a position finding) is ErrNoRepro.
func TorchRepro(reduced []byte, rec *Record) ([]byte, error) {
	if rec.Kind != KindMismatch {
		return nil, fmt.Errorf("%w: a %s finding", ErrNoRepro, rec.Kind)
	}
	f, err := program.Parse("repro.rx", reduced)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoRepro, err)
	}
	fn := f.Func(rec.Func)
	if fn == nil {
		return nil, fmt.Errorf("%w: no function %s", ErrNoRepro, rec.Func)
	}
	file, err := parser.ParseFile(token.NewFileSet(), "repro.rx", reduced, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoRepro, err)
	}
	var decl *ast.FuncDecl
	consts := map[string]string{}
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Name == rec.Func {
				decl = d
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok {
					for i, n := range vs.Names {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
							consts[n.Name] = lit.Value
						}
					}
				}
			}
		}
	}
	if decl == nil {
		return nil, fmt.Errorf("%w: no function %s", ErrNoRepro, rec.Func)
	}
	for _, p := range fn.Params {
		if p.Type.DType.String() != "float32" {
			return nil, fmt.Errorf("%w: parameter %s is not float32", ErrNoRepro, p.Name)
		}
	}
	batch := 1
	if b := f.Batches; len(b) > 0 {
		batch = b[len(b)-1]
	}
	seed := uint64(harness.DefaultScenarioSeed)
	if f.HasSeed {
		seed = f.Seed
	}
	inputs, err := harness.GenerateInputs(f, fn, batch, seed, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoRepro, err)
	}
	p, err := program.Lower(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoRepro, err)
	}
	prep, err := builtin.Reference().Prepare(context.Background(), f, p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoRepro, err)
	}
	defer prep.Close()
	out, err := prep.Run(context.Background(), fn.Name, tensor.CloneMap(inputs))
	if err != nil {
		return nil, fmt.Errorf("%w: the oracle fails: %w", ErrNoRepro, err)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "// Standalone reproducer of rxeq finding %s (%s, %s %s).\n", rec.ID, rec.Category, rec.Framework, rec.Version)
	fmt.Fprintf(&b, "// %s\n", firstLine(rec.Detail))
	b.WriteString("// Build and run: g++ -std=c++17 -O0 repro.cc -o repro -ltorch_cpu -lc10 && ./repro\n")
	b.WriteString("// Exit 1: the discrepancy reproduces; 0: ATen agrees with the expected values (rxeq's oracle).\n")
	b.WriteString("//\n// The rxeq program:\n")
	for _, l := range strings.Split(strings.TrimSpace(string(reduced)), "\n") {
		if !strings.HasPrefix(l, "// ") {
			fmt.Fprintf(&b, "//   %s\n", l)
		}
	}
	b.WriteString("#include <ATen/ATen.h>\n#include <ATen/Parallel.h>\n#include <cmath>\n#include <cstdio>\n#include <vector>\n\n")
	b.WriteString(`static at::Tensor make(std::vector<float> v, std::vector<int64_t> shape) {
  return at::from_blob(v.data(), shape, at::kFloat).clone();
}

// check judges got against want as rxeq does; it prints and counts the mismatches.
static int check(const char* name, const at::Tensor& got_t, std::vector<double> want) {
  at::Tensor g = got_t.contiguous().to(at::kFloat);
  const float* got = g.data_ptr<float>();
  int bad = 0;
  for (size_t i = 0; i < want.size(); i++) {
    double w = want[i], x = got[i];
    bool ok;
    if (std::isnan(w) || std::isnan(x)) ok = std::isnan(w) && std::isnan(x);
    else if (std::isinf(w) || std::isinf(x) || std::fabs(w) > 3.4028234663852886e38) ok = (float)w == (float)x;
    else ok = std::fabs(x - w) <= 3e-6 + 1e-4 * std::fabs(w);
    if (!ok) {
      if (bad < 5) std::printf("%s[%zu]: want %.9g got %.9g\n", name, i, w, x);
      bad++;
    }
  }
  if (bad) std::printf("%s: %d of %zu elements disagree\n", name, bad, want.size());
  return bad;
}

int main() {
  at::set_num_threads(1);
`)
	for _, prm := range fn.Params {
		t := inputs[prm.Name]
		fmt.Fprintf(&b, "  at::Tensor %s = make({%s}, {%s});\n", prm.Name, floatList(t.F32), intList(t.Shape))
	}
	tr := &cxx{consts: consts}
	for _, s := range decl.Body.List {
		switch s := s.(type) {
		case *ast.AssignStmt:
			if len(s.Lhs) != 1 || len(s.Rhs) != 1 {
				return nil, fmt.Errorf("%w: a multiple assignment", ErrNoRepro)
			}
			name := s.Lhs[0].(*ast.Ident).Name
			e, err := tr.expr(s.Rhs[0])
			if err != nil {
				return nil, err
			}
			switch s.Tok {
			case token.DEFINE:
				fmt.Fprintf(&b, "  at::Tensor %s = %s;\n", name, e)
			case token.ASSIGN:
				if tr.declared(name, fn) {
					fmt.Fprintf(&b, "  %s = %s;\n", name, e)
				} else {
					fmt.Fprintf(&b, "  at::Tensor %s = %s;\n", name, e)
					tr.results = append(tr.results, name)
				}
			default:
				return nil, fmt.Errorf("%w: a compound assignment", ErrNoRepro)
			}
		case *ast.ReturnStmt:
			for i, r := range s.Results {
				e, err := tr.expr(r)
				if err != nil {
					return nil, err
				}
				fmt.Fprintf(&b, "  at::Tensor %s = %s;\n", fn.Results[i].Name, e)
			}
		default:
			return nil, fmt.Errorf("%w: control flow", ErrNoRepro)
		}
	}
	b.WriteString("  int bad = 0;\n")
	for _, r := range fn.Results {
		if r.Name != rec.Output {
			continue
		}
		want := out.Outputs[r.Name]
		if want == nil || want.DType != tensor.Float64 {
			return nil, fmt.Errorf("%w: output %s is not a float", ErrNoRepro, r.Name)
		}
		fmt.Fprintf(&b, "  bad += check(%q, %s, {%s});\n", r.Name, r.Name, doubleList(want.F64))
	}
	b.WriteString("  std::printf(bad ? \"reproduced: ATen disagrees with rxeq's contract\\n\" : \"not reproduced\\n\");\n  return bad ? 1 : 0;\n}\n")
	return []byte(b.String()), nil
}

// cxx translates rxeq expressions to ATen calls.
type cxx struct {
	consts  map[string]string
	results []string
}

func (c *cxx) declared(name string, fn *program.Func) bool {
	for _, r := range c.results {
		if r == name {
			return true
		}
	}
	for _, r := range fn.Results {
		if r.Name == name {
			return false
		}
	}
	return true
}

// reproOps are the builtins TorchRepro translates, with their ATen calls.
var reproOps = map[string]string{
	"Maximum": "at::maximum", "Minimum": "at::minimum", "Relu": "at::relu", "Exp": "at::exp", "Log": "at::log",
	"Sqrt": "at::sqrt", "Sigmoid": "at::sigmoid", "Tanh": "at::tanh", "Abs": "at::abs", "MatMul": "at::mm",
}

func (c *cxx) expr(e ast.Expr) (string, error) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return c.expr(e.X)
	case *ast.Ident:
		if v, ok := c.consts[e.Name]; ok {
			return "at::scalar_tensor((float)" + v + ")", nil
		}
		return e.Name, nil
	case *ast.BasicLit:
		return "at::scalar_tensor((float)" + e.Value + ")", nil
	case *ast.UnaryExpr:
		x, err := c.expr(e.X)
		if err != nil || e.Op != token.SUB {
			return "", fmt.Errorf("%w: unary %s", ErrNoRepro, e.Op)
		}
		return "at::neg(" + x + ")", nil
	case *ast.BinaryExpr:
		x, err := c.expr(e.X)
		if err != nil {
			return "", err
		}
		y, err := c.expr(e.Y)
		if err != nil {
			return "", err
		}
		op := map[token.Token]string{token.ADD: "at::add", token.SUB: "at::sub", token.MUL: "at::mul", token.QUO: "at::div"}[e.Op]
		if op == "" {
			return "", fmt.Errorf("%w: operator %s", ErrNoRepro, e.Op)
		}
		return op + "(" + x + ", " + y + ")", nil
	case *ast.CallExpr:
		name := e.Fun.(*ast.Ident).Name
		var args []string
		for _, a := range e.Args {
			s, err := c.expr(a)
			if err != nil {
				return "", err
			}
			args = append(args, s)
		}
		if at, ok := reproOps[name]; ok {
			return at + "(" + strings.Join(args, ", ") + ")", nil
		}
		axis := func(i int) string {
			if i < len(e.Args) {
				if lit, ok := e.Args[i].(*ast.BasicLit); ok {
					return lit.Value
				}
				if u, ok := e.Args[i].(*ast.UnaryExpr); ok {
					if lit, ok := u.X.(*ast.BasicLit); ok {
						return "-" + lit.Value
					}
				}
			}
			return ""
		}
		keep := len(e.Args) > 2 && fmt.Sprint(e.Args[2]) == "true"
		switch name {
		case "Transpose":
			return args[0] + ".t()", nil
		case "Softmax", "LogSoftmax":
			fn := map[string]string{"Softmax": "at::softmax", "LogSoftmax": "at::log_softmax"}[name]
			return fn + "(" + args[0] + ", " + axis(1) + ")", nil
		case "Sum", "Mean", "Max":
			fn := map[string]string{"Sum": "at::sum", "Mean": "at::mean", "Max": "at::amax"}[name]
			return fn + "(" + args[0] + ", {" + axis(1) + "}, " + strconv.FormatBool(keep) + ")", nil
		}
		return "", fmt.Errorf("%w: %s", ErrNoRepro, name)
	}
	return "", fmt.Errorf("%w: expression %T", ErrNoRepro, e)
}

func floatList(xs []float32) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case math.IsNaN(float64(x)):
			b.WriteString("NAN")
		case math.IsInf(float64(x), 1):
			b.WriteString("INFINITY")
		case math.IsInf(float64(x), -1):
			b.WriteString("-INFINITY")
		default:
			b.WriteString(strconv.FormatFloat(float64(x), 'x', -1, 32) + "f")
		}
	}
	return b.String()
}

func doubleList(xs []float64) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case math.IsNaN(x):
			b.WriteString("NAN")
		case math.IsInf(x, 1):
			b.WriteString("INFINITY")
		case math.IsInf(x, -1):
			b.WriteString("-INFINITY")
		default:
			b.WriteString(strconv.FormatFloat(x, 'x', -1, 64))
		}
	}
	return b.String()
}

func intList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
