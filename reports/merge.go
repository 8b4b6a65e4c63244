package reports

import (
	"errors"
	"fmt"
)

// ErrMerge is the kind of every error Merge returns.
var ErrMerge = errors.New("cannot merge reports")

// Merge joins the reports of the shards of one run (rxeq run --shard i/n,
// one report per shard) into the report the unsharded run would have
// written: every case once, in shard order; every lock once (a lock that
// several shards checked keeps its worst status: fail over error over
// pass); the longest duration, since shards run side by side. The shards
// must come from the same run: the same schema, tool version and seed. A
// case that two reports both hold means they were not shards of one run,
// and is an error naming it.
func Merge(shards ...*Report) (*Report, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("%w: no reports", ErrMerge)
	}
	out := &Report{Schema: Schema, Cases: []Case{}, Locks: []Lock{}}
	type where struct{ shard int }
	cases := map[string]where{}
	locks := map[string]int{}
	for i, r := range shards {
		if r == nil {
			return nil, fmt.Errorf("%w: report %d is nil", ErrMerge, i+1)
		}
		if r.Schema != "" && r.Schema != Schema {
			return nil, fmt.Errorf("%w: report %d: %w %q", ErrMerge, i+1, ErrSchema, r.Schema)
		}
		if i == 0 {
			out.ToolVersion, out.Compiler, out.Seed = r.ToolVersion, r.Compiler, r.Seed
		} else {
			if r.Seed != out.Seed {
				return nil, fmt.Errorf("%w: report %d has seed %d, report 1 seed %d: not shards of one run", ErrMerge, i+1, r.Seed, out.Seed)
			}
			if r.ToolVersion != out.ToolVersion {
				return nil, fmt.Errorf("%w: report %d was written by rxeq %s, report 1 by %s", ErrMerge, i+1, r.ToolVersion, out.ToolVersion)
			}
			if out.Compiler == "" {
				out.Compiler = r.Compiler
			}
		}
		out.Duration = max(out.Duration, r.Duration)
		out.Inputs = append(out.Inputs, r.Inputs...)
		for _, c := range r.Cases {
			k := c.Scenario + "\x00" + c.Name()
			if w, dup := cases[k]; dup {
				return nil, fmt.Errorf("%w: case %s/%s is in report %d and in report %d: were they sharded the same way?", ErrMerge, c.Scenario, c.Name(), w.shard+1, i+1)
			}
			cases[k] = where{i}
			out.Cases = append(out.Cases, c)
		}
		for _, l := range r.Locks {
			k := l.Scenario + "\x00" + l.Function
			if at, seen := locks[k]; seen {
				if rank(l.Status) > rank(out.Locks[at].Status) {
					out.Locks[at] = l
				}
				continue
			}
			locks[k] = len(out.Locks)
			out.Locks = append(out.Locks, l)
		}
	}
	return out, nil
}

// rank orders statuses from best to worst for Merge.
func rank(s Status) int {
	switch s {
	case StatusPass, StatusXPass:
		return 0
	case StatusSkip, StatusXFail:
		return 1
	case StatusError:
		return 2
	}
	return 3
}
