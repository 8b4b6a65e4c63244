package main

import (
	"fmt"
	"os"
	"regexp"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/ledger"
	"github.com/rextio/rxeq/program"
)

var scenarioDirective = regexp.MustCompile(`(?m)^//rx:scenario\s+(\S+)`)

// applyLedger turns the failed cases that an entry of led matches into
// xfail (their message led by the entry's text), and the passing cases of
// an entry's own program (its //rx:scenario) into xpass. The ops of a
// case are those of its file as read from disk (a built-in scenario has
// none, so only entries without an ops matcher match it); its value class
// is that of its listed mismatches. With strict, an xpass is a failure.
//
// invariance holds the value class of each failing invariance case (by
// name); those are matched with category position.
func applyLedger(res *harness.Result, files []*program.File, led *ledger.Ledger, read func(string) ([]byte, error), strict bool, invariance map[string]string) {
	if led == nil || res == nil {
		return
	}
	ops := map[string][]string{}
	for _, f := range files {
		if src, err := os.ReadFile(f.Name); err == nil {
			ops[scenarioName(f)] = fuzz.ProgramOps(src)
		}
	}
	owned := map[string][]*ledger.Entry{} // scenario -> the entries whose program it is
	for i := range led.Entries {
		e := &led.Entries[i]
		if e.Program == "" || read == nil {
			continue
		}
		if src, err := read(e.Program); err == nil {
			if m := scenarioDirective.FindSubmatch(src); m != nil {
				owned[string(m[1])] = append(owned[string(m[1])], e)
			}
		}
	}
	reported := map[executor.Name]string{} // what each executor said runs it
	for _, p := range res.Preparations {
		if p.Framework != "" {
			reported[p.Executor] = p.Framework
		}
	}
	for i := range res.Cases {
		c := &res.Cases[i]
		_, version := frameworkOf(c.Executor, reported[c.Executor])
		switch c.Status {
		case harness.StatusFail:
			values := caseValues(c)
			cat := fuzz.CategoryOfValues(values)
			switch {
			case c.Check == "invariance":
				values, cat = invariance[c.Name()], fuzz.CatPosition
			case c.Error != "":
				// The executor failed where the reference did not.
				values, cat = "", fuzz.CatErrorMismatch
			}
			lc := ledger.Case{Executor: string(c.Executor), Version: version, Category: string(cat),
				Ops: ops[c.Scenario], Values: values, Scenario: c.Scenario, Output: failedOutput(c), Error: c.Error}
			if e := led.Match(lc); e != nil {
				c.Status = harness.StatusXFail
				c.Message = "xfail: " + e.Text() + "\n" + c.Message
			}
		case harness.StatusPass:
			for _, e := range owned[c.Scenario] {
				// A position entry's program expects its invariance case
				// to fail, any other entry's its comparison.
				if (e.Category == string(fuzz.CatPosition)) != (c.Check == "invariance") {
					continue
				}
				if e.Executor == string(c.Executor) && e.InRange(version) {
					c.Status = harness.StatusXPass
					c.Message = fmt.Sprintf("xpass: ledger entry %s expects this case to fail, and it passed: %s", e.ID, e.Text())
					if strict {
						c.Status = harness.StatusFail
						c.Message = "strict " + c.Message
					}
					break
				}
			}
		}
	}
}

// scenarioName is the scenario of f as the runner names its cases.
func scenarioName(f *program.File) string { return f.ScenarioName() }

// failedOutput is the name of a failed case's one failing output, or ""
// when none or several fail (then only entries without an output matcher
// match it).
func failedOutput(c *harness.Case) string {
	name := ""
	for _, m := range c.Outputs {
		if m.OK {
			continue
		}
		if name != "" {
			return ""
		}
		name = m.Name
	}
	return name
}

// caseValues is the value class of a failed case's listed mismatches.
func caseValues(c *harness.Case) string {
	var want, got []float64
	signed := false
	for _, m := range c.Outputs {
		if m.OK {
			continue
		}
		for _, x := range m.First {
			want, got = append(want, x.Want), append(got, x.Got)
		}
		signed = signed || m.SignedZeroMismatches > 0
	}
	return fuzz.ValuesOfMismatches(want, got, signed)
}
