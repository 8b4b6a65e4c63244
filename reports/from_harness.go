package reports

import (
	"fmt"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/harness"
)

// RunInfo is what a report needs beyond the harness result.
type RunInfo struct {
	ToolVersion string
	Seed        uint64 // the --seed override, or 0 when each scenario used its own
}

// FromResult turns a harness result into a report: one Case per harness
// case (float outputs with their tolerance, classes exact with their
// near-ties, and one ULP entry per output measured against the ULP base),
// one Lock per locked function.
func FromResult(res *harness.Result, info RunInfo) *Report {
	r := &Report{
		Schema:      Schema,
		ToolVersion: info.ToolVersion,
		Seed:        info.Seed,
		Duration:    res.Wall.Seconds(),
		Cases:       []Case{},
		Locks:       []Lock{},
		Shard:       &Shard{Index: max(res.Shard.Index, 1), Total: max(res.Shard.Total, 1), Groups: res.Groups},
	}
	for _, p := range res.Preparations {
		if p.Compiler != "" {
			r.Compiler = p.Compiler
			break
		}
	}
	for _, p := range res.Preparations {
		if p.Framework != "" && p.Executor == executor.Torch && r.Framework == "" {
			r.Framework = p.Framework
		}
		if p.Framework != "" && r.Frameworks[string(p.Executor)] == "" {
			if r.Frameworks == nil {
				r.Frameworks = map[string]string{}
			}
			r.Frameworks[string(p.Executor)] = p.Framework
		}
	}
	for _, u := range res.Unavailable {
		r.Unavailable = append(r.Unavailable, Unavailable{Executor: string(u.Executor), Reason: u.Reason})
	}
	for _, rp := range res.Replays {
		r.Inputs = append(r.Inputs, InputSource{Case: fmt.Sprintf("%s/%s/b%d", rp.Scenario, rp.Function, rp.Batch),
			Files: rp.Files, Generated: rp.Generated})
	}
	for _, c := range res.Cases {
		r.Cases = append(r.Cases, fromCase(c))
	}
	for _, l := range res.Locks {
		r.Locks = append(r.Locks, fromLock(l))
	}
	return r
}

func seconds(d time.Duration) float64 { return d.Seconds() }

func fromCase(c harness.Case) Case {
	out := Case{
		Scenario: c.Scenario, Function: c.Function, Batch: c.Batch, Executor: string(c.Executor), Path: string(c.Path), Group: c.Group,
		Seed: c.Seed, Status: Status(c.Status), Check: c.Check, Duration: seconds(c.Timing.Total()),
		Timing: &Timing{
			Prepare: seconds(c.Timing.Prepare), Inputs: seconds(c.Timing.Inputs),
			Execute: seconds(c.Timing.Execute), Compare: seconds(c.Timing.Compare),
		},
		Outputs: []Output{},
		Error:   c.Error, Message: c.Message, Blame: string(c.Blame), Twin: string(c.Twin),
	}
	for _, m := range c.Outputs {
		o := Output{
			Name: m.Name, Against: "oracle", OK: m.OK, Total: m.Total, Mismatches: m.Mismatches,
			MaxAbs: Number(m.MaxAbsDiff), MaxRel: Number(m.MaxRelDiff), MaxULP: m.MaxULP,
			MaxAbsIndex: m.MaxAbsIndex, MaxRelIndex: m.MaxRelIndex, WorstIndex: m.WorstIndex,
			Report: firstLine(m.Report),
		}
		if m.Problem != "" {
			o.Report = m.Problem
		}
		if tol, ok := c.Tolerances[m.Name]; ok {
			o.Tolerance = &Tolerance{RTol: tol.RTol, ATol: tol.ATol, NoAbsRel: tol.NoAbsRel}
			if tol.UseULP {
				u := tol.ULP
				o.Tolerance.ULP = &u
			}
		}
		for _, t := range m.NearTies {
			o.NearTies = append(o.NearTies, NearTie{Index: t.Index, Classes: t.Classes, Want: t.Want, Got: t.Got})
		}
		out.Outputs = append(out.Outputs, o)
	}
	for _, u := range c.ULP {
		against := u.Against
		if against == "" {
			against = string(executor.Fallback)
		}
		o := Output{Name: u.Name, Against: against, OK: u.OK, Total: u.Total, MaxULP: u.MaxULP,
			MaxAbsIndex: u.MaxULPIndex, Mismatches: u.NaNMismatches + u.InfMismatches + u.Mismatches, Report: firstLine(u.Report)}
		if u.Problem != "" {
			o.Report = u.Problem
		}
		out.Outputs = append(out.Outputs, o)
	}
	return out
}

func fromLock(l harness.LockCase) Lock {
	out := Lock{Scenario: l.Scenario, Function: l.Function, CFunc: l.Result.Func, Group: l.Group, Status: StatusPass, Checks: []LockCheck{},
		Duration: l.Duration.Seconds()}
	if !l.OK() {
		out.Status = StatusFail
		out.Message = l.Result.Message
		if l.Error != "" {
			out.Status, out.Message = StatusError, l.Error
		}
	}
	for _, c := range l.Result.Checks {
		out.Checks = append(out.Checks, LockCheck{Kind: c.Lock.Kind.String(), Regexp: c.Lock.Regexp, Text: c.Lock.Text,
			Pos: c.Lock.Pos.String(), OK: c.OK, Skipped: c.Skipped, Line: c.Line, Message: firstLine(c.Message)})
	}
	return out
}
