package program

import (
	"go/ast"
	"go/token"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// directivePrefix starts every rxeq directive, like //go: for Go's.
const directivePrefix = "//rx:"

var scenarioName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// fileDirectives and funcDirectives are every directive the language knows.
var (
	fileDirectives = []string{"scenario", "batches", "seed", "input", "tolerance", "expect-error", "signed-zeros"}
	funcDirectives = []string{"lock", "lock-not", "lock-next", "lock-same", "skip"}
)

// checkDirectives reads every //rx: comment: function-level ones (lock,
// lock-not, skip) inside a function body, file-level ones elsewhere.
func (c *checker) checkDirectives(f *ast.File, funcs []*ast.FuncDecl) {
	seen := map[string]token.Position{}
	c.inputNamed, c.inputPos = map[string]bool{}, map[string]token.Position{}
	for _, group := range f.Comments {
		for _, cm := range group.List {
			if !strings.HasPrefix(cm.Text, directivePrefix) {
				continue
			}
			pos := c.pos(cm.Pos())
			name, args, _ := strings.Cut(strings.TrimPrefix(cm.Text, directivePrefix), " ")
			args = strings.TrimSpace(args)
			owner := enclosingFunc(funcs, cm.Pos())
			switch {
			case contains(funcDirectives, name):
				if owner == nil {
					c.errorAt(pos, "//rx:%s must be written inside the body of the function it checks", name)
					continue
				}
				if name == "skip" {
					c.skipDirective(pos, args, owner.Name.Name)
					continue
				}
				c.lockDirective(pos, name, args, owner.Name.Name)
			case contains(fileDirectives, name):
				if owner != nil {
					c.errorAt(pos, "//rx:%s is a file-level directive: write it outside any function", name)
					continue
				}
				if name != "input" && name != "tolerance" {
					if first, dup := seen[name]; dup {
						c.errorAt(pos, "//rx:%s given twice (first at %s)", name, first)
						continue
					}
					seen[name] = pos
				}
				c.fileDirective(pos, name, args)
			default:
				c.errorAt(pos, "unknown directive //rx:%s: want one of %s (file level) or %s (inside a function)",
					name, strings.Join(fileDirectives, ", "), strings.Join(funcDirectives, ", "))
			}
		}
	}
}

// enclosingFunc returns the function whose body holds pos, or nil. funcs
// are in source order and do not overlap, so a binary search finds it.
func enclosingFunc(funcs []*ast.FuncDecl, pos token.Pos) *ast.FuncDecl {
	i := sort.Search(len(funcs), func(i int) bool { return funcs[i].End() > pos })
	if i < len(funcs) {
		if fd := funcs[i]; fd.Body != nil && pos > fd.Body.Lbrace && pos < fd.Body.Rbrace {
			return fd
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (c *checker) lockDirective(pos token.Position, name, args, fn string) {
	text, isRegexp, err := unquoteArg(args)
	if err != nil || text == "" {
		c.errorAt(pos, "//rx:%s wants one non-empty quoted argument: \"literal text\" or `regexp`", name)
		return
	}
	kind := map[string]LockKind{"lock": LockMatch, "lock-not": LockNot, "lock-next": LockNext, "lock-same": LockSame}[name]
	l := Lock{Kind: kind, Regexp: isRegexp, Text: text, Pos: pos}
	f := c.funcs[fn]
	// Variables: a use needs a definition by an earlier positive check of
	// the same function (they are checked with placeholder values here).
	vars := map[string]string{}
	positives := 0
	if f != nil {
		for _, prev := range f.Locks {
			if !prev.Kind.Positive() {
				continue
			}
			positives++
			if _, defs, err := prev.Pattern(vars); err == nil {
				for _, d := range defs {
					vars[d] = d
				}
			}
		}
	}
	if (kind == LockNext || kind == LockSame) && positives == 0 {
		c.errorAt(pos, "//rx:%s needs a //rx:lock before it in the function: it matches relative to the previous match", name)
		return
	}
	if isRegexp || l.HasVars() {
		if _, _, err := l.Pattern(vars); err != nil {
			c.errorAt(pos, "//rx:%s: %v", name, err)
			return
		}
	}
	if f != nil {
		f.Locks = append(f.Locks, l)
	}
}

// skipExecutor is what an executor name in //rx:skip looks like
// (executor.ValidName's pattern).
var skipExecutor = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// skipDirective reads //rx:skip EXECUTOR[,EXECUTOR…] "reason".
func (c *checker) skipDirective(pos token.Position, args, fn string) {
	list, reason, _ := strings.Cut(args, " ")
	text, _, err := unquoteArg(strings.TrimSpace(reason))
	if list == "" || err != nil || strings.TrimSpace(text) == "" {
		c.errorAt(pos, "//rx:skip wants executor names and a non-empty quoted reason, like //rx:skip onnxruntime,onnxruntime-noopt \"ReduceMax ignores NaN\"")
		return
	}
	var names []string
	for _, n := range strings.Split(list, ",") {
		if !skipExecutor.MatchString(n) || n == "oracle" {
			c.errorAt(pos, "//rx:skip: %q is not an executor that can be skipped (a name like onnxruntime; never oracle, the reference)", n)
			return
		}
		names = append(names, n)
	}
	if f := c.funcs[fn]; f != nil {
		f.Skips = append(f.Skips, Skip{Executors: names, Reason: text, Pos: pos})
	}
}

// unquoteArg reads a Go string literal: "…" (interpreted) or `…` (raw).
func unquoteArg(s string) (text string, raw bool, err error) {
	if s == "" || (s[0] != '"' && s[0] != '`') {
		return "", false, strconv.ErrSyntax
	}
	text, err = strconv.Unquote(s)
	return text, s[0] == '`', err
}

func (c *checker) fileDirective(pos token.Position, name, args string) {
	fields := strings.Fields(args)
	switch name {
	case "scenario":
		if len(fields) != 1 || !scenarioName.MatchString(fields[0]) {
			c.errorAt(pos, "//rx:scenario wants one name of letters, digits, '_', '.' or '-', like //rx:scenario small-batch-scoring")
			return
		}
		c.file.Scenario = fields[0]
	case "batches":
		if len(fields) == 0 {
			c.errorAt(pos, "//rx:batches wants one or more positive batch sizes, like //rx:batches 1 16 128")
			return
		}
		for _, f := range fields {
			n, err := strconv.Atoi(f)
			if err != nil || n <= 0 || n > 1<<24 {
				c.errorAt(pos, "//rx:batches: %q is not a batch size: want positive integers, like //rx:batches 1 16 128", f)
				return
			}
			c.file.Batches = append(c.file.Batches, n)
		}
	case "seed":
		v, err := strconv.ParseUint(args, 0, 64)
		if len(fields) != 1 || err != nil {
			c.errorAt(pos, "//rx:seed wants one unsigned integer, like //rx:seed 20261202")
			return
		}
		c.file.Seed, c.file.HasSeed = v, true
	case "input":
		param, dist, _ := strings.Cut(args, " ")
		if param == "" || strings.TrimSpace(dist) == "" {
			c.errorAt(pos, "//rx:input wants a parameter and a distribution, like //rx:input x normal(0, 1)")
			return
		}
		c.inputNamed[param] = true
		d, err := tensor.ParseDist(dist)
		if err != nil {
			c.errorAt(pos, "//rx:input %s: %v", param, err)
			return
		}
		if first, dup := c.inputPos[param]; dup {
			c.errorAt(pos, "//rx:input %s given twice (first at %s)", param, first)
			return
		}
		c.inputPos[param] = pos
		if msg := c.inputParamProblem(param, d); msg != "" {
			c.errorAt(pos, "//rx:input %s: %s", param, msg)
			return
		}
		c.file.Inputs = append(c.file.Inputs, Input{Param: param, Dist: d, Pos: pos})
	case "tolerance":
		c.toleranceDirective(pos, fields)
	case "signed-zeros":
		if len(fields) != 0 {
			c.errorAt(pos, "//rx:signed-zeros takes no arguments")
			return
		}
		c.file.SignedZeros = true
	case "expect-error":
		text, _, err := unquoteArg(args)
		if err != nil || text == "" {
			c.errorAt(pos, "//rx:expect-error wants one quoted, non-empty error text, like //rx:expect-error \"division by zero\"")
			return
		}
		c.file.ExpectError = text
	}
}

// MaxInputInt is the largest magnitude of the N in //rx:input p const(N)
// for an int64 parameter: distribution arguments are float64, which hold
// every integer up to 2^53 exactly.
const MaxInputInt = 1 << 53

// inputParamProblem says what is wrong with an //rx:input for param, or "".
// int64 scalar parameters take only const(v) with an integral v of
// magnitude at most MaxInputInt.
func (c *checker) inputParamProblem(param string, d tensor.Dist) string {
	ps := c.params[param]
	for _, p := range ps {
		if p.Type.DType == ir.Int64 && (d.Kind != tensor.Const || d.A != math.Trunc(d.A) || math.Abs(d.A) > MaxInputInt) {
			return "an int64 parameter takes const(N) with an integer N between -2^53 and 2^53 (distribution arguments are float64, exact up to 2^53)"
		}
	}
	if len(ps) == 0 && len(c.file.Funcs) > 0 {
		return "no function has a parameter " + param
	}
	return ""
}

func (c *checker) toleranceDirective(pos token.Position, fields []string) {
	usage := "want //rx:tolerance OUTPUT rtol=R atol=A, or ulp=N, or all three, with non-negative numbers (N an integer)"
	if len(fields) < 2 || len(fields) > 5 {
		c.errorAt(pos, "//rx:tolerance: %s", usage)
		return
	}
	t := Tolerance{Output: fields[0], Pos: pos}
	var haveR, haveA bool
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if k == "for" && ok {
			if t.Executors != nil {
				c.errorAt(pos, "//rx:tolerance: %q: for= given twice", f)
				return
			}
			for _, n := range strings.Split(v, ",") {
				if !skipExecutor.MatchString(n) || n == "oracle" {
					c.errorAt(pos, "//rx:tolerance: for=%s: %q is not an executor a tolerance can apply to (want names like for=torch,onnxruntime; never oracle, the reference)", v, n)
					return
				}
				t.Executors = append(t.Executors, n)
			}
			continue
		}
		x, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || x < 0 || x != x || x > 1e300 {
			c.errorAt(pos, "//rx:tolerance: %q: %s", f, usage)
			return
		}
		switch {
		case k == "rtol" && !haveR:
			t.RTol, haveR = x, true
		case k == "atol" && !haveA:
			t.ATol, haveA = x, true
		case k == "ulp" && !t.HasULP && x == float64(int64(x)) && x <= 1<<31:
			t.ULP, t.HasULP = int64(x), true
		default:
			c.errorAt(pos, "//rx:tolerance: %q: %s", f, usage)
			return
		}
	}
	t.HasAbsRel = haveR || haveA
	if !t.HasAbsRel && !t.HasULP {
		c.errorAt(pos, "//rx:tolerance: %s", usage)
		return
	}
	if len(c.results[t.Output]) == 0 && len(c.file.Funcs) > 0 {
		c.errorAt(pos, "//rx:tolerance: no function has a result %s", t.Output)
		return
	}
	if rs := c.results[t.Output]; len(rs) > 0 && !slices.ContainsFunc(rs, func(r *Var) bool { return r.Type.DType == ir.Float32 }) {
		c.errorAt(pos, "//rx:tolerance: result %s is %s and compared exactly: a tolerance applies to float32 results only; remove the directive", t.Output, rs[0].Type.DType)
		return
	}
	c.file.Tolerances = append(c.file.Tolerances, t)
}
