package onnx

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rextio/rxeq/program/ir"
)

// ErrNoFunction is the kind of the error Export and Describe return for a
// function the program does not have.
var ErrNoFunction = errors.New("no such function")

// ErrorOutput is the name of the extra output a model carries when its
// function has checked integer arithmetic (CheckedDiv, CheckedRem) that
// can fail.
const ErrorOutput = "rx_error"

// Port is one graph input or output of an exported model.
type Port struct {
	// Name is the name in the model: the rxeq name itself when it is a
	// safe ASCII identifier (see ModelName), a mangled one otherwise.
	Name string
	// Value is the rxeq parameter or result the port stands for; its Name
	// is the rxeq name and its Type the dtype and shape (an int64 scalar
	// parameter is a rank-0 int64 tensor; a symbolic dimension is a
	// dim_param of the same name).
	Value *ir.Value
}

// Signature says how an exported function's parameters and results appear
// in its model, so that an executor can feed the model and read it back.
//
// The graph's inputs are the function's parameters, in order; its outputs
// are the function's results, in order, followed by ErrorOutput when the
// function has checked integer arithmetic that can fail (a CheckedRem whose
// divisor is not a constant other than 0, a CheckedDiv whose divisor is
// not a constant other than 0 and -1). That
// output is an int64 tensor
// of shape [3]: (site, lhs, rhs), all zero when the call succeeded, and
// otherwise the 1-based number of the checked operation that failed first
// (in the order ir.Walk visits the function's instructions) with its two
// operands. Error turns it into the error every other executor returns
// for the same case. When it is not zero the other outputs hold no
// meaningful values.
type Signature struct {
	Func    string
	Inputs  []Port
	Outputs []Port
	// Error is ErrorOutput when the model has the error output, "" when the
	// function has no checked arithmetic that can fail.
	Error string
	// Sites are the function's checked operations, in Walk order: site
	// number k in the error output is Sites[k-1].
	Sites []*ir.Site
}

// Describe returns the signature of function fn's model, the same that
// Export writes.
func Describe(p *ir.Program, fn string) (*Signature, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: %s (nil program)", ErrNoFunction, fn)
	}
	f := p.Func(fn)
	if f == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoFunction, fn)
	}
	return describe(f), nil
}

func describe(f *ir.Func) *Signature {
	s := &Signature{Func: f.Name}
	for i, v := range f.Params {
		s.Inputs = append(s.Inputs, Port{Name: ModelName(v.Name, "p", i), Value: v})
	}
	for i, v := range f.Results {
		s.Outputs = append(s.Outputs, Port{Name: ModelName(v.Name, "r", i), Value: v})
	}
	consts := constInts(f)
	ir.Walk(f.Body, func(in ir.Instr) {
		if op, ok := in.(*ir.Op); ok && (op.Kind == ir.CheckedDiv || op.Kind == ir.CheckedRem) {
			s.Sites = append(s.Sites, op.Site)
			if canFail(op, consts) {
				s.Error = ErrorOutput
			}
		}
	})
	return s
}

// constInts returns the temps that hold an integer constant (ConstI).
func constInts(f *ir.Func) map[*ir.Value]int64 {
	out := map[*ir.Value]int64{}
	ir.Walk(f.Body, func(in ir.Instr) {
		if op, ok := in.(*ir.Op); ok && op.Kind == ir.ConstI && op.Dst.Kind == ir.Temp {
			out[op.Dst] = op.I
		}
	})
	return out
}

// canFail reports whether a checked operation can fail: unless its divisor
// is a constant other than 0 (and, for CheckedDiv, other than -1), it can.
func canFail(op *ir.Op, consts map[*ir.Value]int64) bool {
	if len(op.Args) != 2 {
		return true
	}
	b, ok := consts[op.Args[1]]
	return !ok || b == 0 || b == -1 && op.Kind == ir.CheckedDiv
}

// Err turns the values of the error output into the call's error: nil when
// the site number is 0, the *ir.RuntimeError of that checked operation
// otherwise (ir.CheckedError, the text every executor gives), and an error
// wrapping ErrBadErrorOutput when the values cannot come from the model.
func (s *Signature) Err(state []int64) error {
	if len(state) != 3 {
		return fmt.Errorf("%w: %d values, want 3", ErrBadErrorOutput, len(state))
	}
	site := state[0]
	if site == 0 {
		return nil
	}
	if site < 0 || site > int64(len(s.Sites)) || s.Sites[site-1] == nil {
		return fmt.Errorf("%w: site %d of %d", ErrBadErrorOutput, site, len(s.Sites))
	}
	return ir.CheckedError(s.Sites[site-1], state[1], state[2])
}

// ErrBadErrorOutput is the kind of the error Signature.Err returns for
// error-output values the exported model cannot produce.
var ErrBadErrorOutput = errors.New("malformed rx_error output")

// ModelName returns the model's name for an rxeq parameter (role "p") or
// result (role "r") at position index: name itself when it matches
// [A-Za-z][A-Za-z0-9_]* and does not start with "rx_" (any case), so the
// model reads like the program; otherwise "rx_" + role + index + "_"
// followed by name's ASCII letters, digits and underscores (at most 32),
// which cannot collide with a kept name, with another mangled one, or with
// the names the exporter gives intermediates ("rx_v…") and the error
// output ("rx_error").
func ModelName(name, role string, index int) string {
	if safeName(name) {
		return name
	}
	return fmt.Sprintf("rx_%s%d_%s", role, index, sanitize(name))
}

func safeName(s string) bool {
	if s == "" || len(s) > 128 || strings.HasPrefix(strings.ToLower(s), "rx_") {
		return false
	}
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '_')) {
			return false
		}
	}
	return true
}

// sanitize keeps the ASCII letters, digits and underscores of s, at most
// 32 of them.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 32 {
			break
		}
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			b.WriteRune(r)
		}
	}
	return b.String()
}
