package rxginkgo

import (
	"fmt"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/lock"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// matcher adapts a function returning (ok, failure text) to gomega.
type matcher struct {
	match   func(actual any) (bool, string, error)
	negated string
	message string
}

func (m *matcher) Match(actual any) (bool, error) {
	ok, msg, err := m.match(actual)
	m.message = msg
	return ok, err
}

func (m *matcher) FailureMessage(any) string        { return m.message }
func (m *matcher) NegatedFailureMessage(any) string { return m.negated }

// BeWithinTolerance succeeds when the actual *tensor.Tensor (a float32 or
// int64 output) matches the oracle's want by rxeq's comparison rules:
// |got − want| ≤ ATol + RTol·|want| element by element, NaN at the same
// places, infinities of the same sign, int64 exactly. The failure message
// is the harness's mismatch report.
func BeWithinTolerance(want *tensor.Tensor, tol compare.Tolerance) types.GomegaMatcher {
	return &matcher{
		negated: "expected the output to differ from the oracle beyond tolerance, but it is within it",
		match: func(actual any) (bool, string, error) {
			got, ok := actual.(*tensor.Tensor)
			if !ok {
				return false, "", fmt.Errorf("BeWithinTolerance expects a *tensor.Tensor, got %T", actual)
			}
			m := compare.ToOracle("output", want, got, tol)
			if m.Problem != "" {
				return false, "output: " + m.Problem, nil
			}
			return m.OK, m.Report, nil
		},
	}
}

// SatisfyLocks succeeds when the actual generated C ([]byte or string,
// e.g. from native.Generate) satisfies fn's //rx:lock and //rx:lock-not
// lines, scoped to fn's own C function. The failure message names the
// check and shows the body with the nearest near-miss line.
func SatisfyLocks(fn *program.Func) types.GomegaMatcher {
	return &matcher{
		negated: fmt.Sprintf("expected the locks of %s to fail, but they hold", fn.Name),
		match: func(actual any) (bool, string, error) {
			var src []byte
			switch a := actual.(type) {
			case []byte:
				src = a
			case string:
				src = []byte(a)
			default:
				return false, "", fmt.Errorf("SatisfyLocks expects C source as []byte or string, got %T", actual)
			}
			res := lock.Check(src, native.CFuncName(fn.Name), fn.Locks)
			return res.OK, res.Message, nil
		},
	}
}

// Pass succeeds when the actual *harness.Result has every case passing and
// every lock holding; the failure message lists each failing case with its
// full mismatch report and each failing lock with its near-miss text.
func Pass() types.GomegaMatcher {
	return &matcher{
		negated: "expected the run to fail, but every case passed and every lock held",
		match: func(actual any) (bool, string, error) {
			res, ok := actual.(*harness.Result)
			if !ok || res == nil {
				return false, "", fmt.Errorf("Pass expects a non-nil *harness.Result, got %T", actual)
			}
			if res.OK() {
				return true, "", nil
			}
			var b strings.Builder
			for _, c := range res.Cases {
				if c.Status != harness.StatusPass {
					fmt.Fprintf(&b, "%s %s:\n    %s\n", strings.ToUpper(string(c.Status)), c.Name(), strings.ReplaceAll(c.Message, "\n", "\n    "))
				}
			}
			for _, l := range res.Locks {
				if !l.OK() {
					msg := l.Result.Message
					if l.Error != "" {
						msg = l.Error
					}
					fmt.Fprintf(&b, "LOCK %s/%s:\n    %s\n", l.Scenario, l.Function, strings.ReplaceAll(msg, "\n", "\n    "))
				}
			}
			return false, b.String(), nil
		},
	}
}
