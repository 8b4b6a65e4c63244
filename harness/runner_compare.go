package harness

import (
	"errors"
	"strings"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/program"
)

// judge fills c.Status and c.Message from the comparison of one executor's
// run with the reference's.
func judge(c *Case, fn *program.Func, ref refRun, got executor.Outcome, gotErr error, tols map[string]compare.Tolerance, classes map[string]compare.ClassSource, kindsOnly bool) {
	if errors.Is(gotErr, executor.ErrRejected) {
		// Not an error of the program: rxeq refused what the executor
		// answered (a wrong dtype or shape, a modified input).
		c.Status = StatusFail
		c.Message = "rxeq rejected the executor's answer: " + gotErr.Error()
		if ref.err != nil {
			c.Message += "\n(the oracle failed with: " + ref.err.Error() + ")"
		}
		return
	}
	var problems []string
	if ref.err != nil || gotErr != nil {
		errs := compare.Errors
		if kindsOnly {
			errs = compare.ErrorKinds
		}
		if ok, msg := errs(ref.err, gotErr); !ok {
			problems = append(problems, msg)
		}
	}
	if ref.err == nil && gotErr == nil {
		metrics, extra := compare.Outputs(fn, ref.out.Outputs, got.Outputs, tols, classes)
		c.Outputs = metrics
		for _, m := range metrics {
			if !m.OK {
				problems = append(problems, m.Report)
			}
		}
		if len(extra) > 0 {
			problems = append(problems, compare.Undeclared(extra))
		}
	}
	if len(problems) > 0 {
		c.Status = StatusFail
		c.Message = strings.Join(problems, "\n")
		return
	}
	c.Status = StatusPass
}
