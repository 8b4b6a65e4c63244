package reports

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrMerge is the kind of every error Merge returns.
var ErrMerge = errors.New("cannot merge reports")

// Merge joins the reports of the shards of one run (rxeq run --shard i/n,
// one report per shard) into the report the unsharded run would have
// written: every case once, in the unsharded run's order (by Case.Group);
// every lock once (a lock that several shards checked keeps its worst
// status: fail over error over pass), in the same order; the longest
// duration, since shards run side by side. The shards must come from the
// same run: the same schema, tool version and seed. A case that two
// reports both hold means they were not shards of one run, and is an
// error naming it.
//
// Reports that say which shard they hold (Report.Shard, written by this
// version) must make up the whole run: the same total and group count,
// each shard 1…Total exactly once — a missing shard is an error naming it
// ("shard 2/3 is missing") — and each case in the shard its group belongs
// to. Reports of older versions, which do not say, cannot be checked and
// cannot be mixed with those that do.
func Merge(shards ...*Report) (*Report, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("%w: no reports", ErrMerge)
	}
	if err := checkShards(shards); err != nil {
		return nil, err
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
	if sh := shards[0].Shard; sh != nil {
		out.Shard = &Shard{Index: 1, Total: 1, Groups: sh.Groups}
		// A group is in one shard, and a shard's cases come in the
		// run's order: a stable sort by group is the unsharded order.
		slices.SortStableFunc(out.Cases, func(a, b Case) int { return cmp.Compare(a.Group, b.Group) })
		slices.SortStableFunc(out.Locks, func(a, b Lock) int { return cmp.Compare(a.Group, b.Group) })
	}
	return out, nil
}

// checkShards checks that reports which say their shard make up one whole
// run (see Merge).
func checkShards(shards []*Report) error {
	var with, without []int
	for i, r := range shards {
		if r == nil {
			return fmt.Errorf("%w: report %d is nil", ErrMerge, i+1)
		}
		if r.Shard == nil {
			without = append(without, i+1)
		} else {
			with = append(with, i+1)
		}
	}
	if len(with) == 0 {
		return nil
	}
	if len(without) > 0 {
		return fmt.Errorf("%w: report %d says which shard it holds, report %d does not (written by an older rxeq?): merge reports of one version", ErrMerge, with[0], without[0])
	}
	first := shards[0].Shard
	if first.Total < 1 || first.Groups < 0 {
		return fmt.Errorf("%w: report 1 claims shard %d/%d of %d groups", ErrMerge, first.Index, first.Total, first.Groups)
	}
	seen := make(map[int]int, first.Total) // shard index -> report
	for i, r := range shards {
		sh := r.Shard
		if sh.Total != first.Total || sh.Groups != first.Groups {
			return fmt.Errorf("%w: report %d is shard %d/%d of a run of %d groups, report 1 shard %d/%d of %d groups: not shards of one run",
				ErrMerge, i+1, sh.Index, sh.Total, sh.Groups, first.Index, first.Total, first.Groups)
		}
		if sh.Index < 1 || sh.Index > sh.Total {
			return fmt.Errorf("%w: report %d claims shard %d/%d", ErrMerge, i+1, sh.Index, sh.Total)
		}
		if j, dup := seen[sh.Index]; dup {
			return fmt.Errorf("%w: reports %d and %d are both shard %d/%d", ErrMerge, j, i+1, sh.Index, sh.Total)
		}
		seen[sh.Index] = i + 1
		for _, c := range r.Cases {
			if c.Group < 0 || c.Group >= sh.Groups || c.Group%sh.Total != sh.Index-1 {
				return fmt.Errorf("%w: report %d (shard %d/%d) holds case %s/%s of group %d, which is not in that shard of %d groups",
					ErrMerge, i+1, sh.Index, sh.Total, c.Scenario, c.Name(), c.Group, sh.Groups)
			}
		}
	}
	var missing []string
	for k := 1; k <= first.Total; k++ {
		if _, ok := seen[k]; !ok && k-1 < first.Groups { // a shard beyond the group count holds nothing
			missing = append(missing, fmt.Sprintf("%d/%d", k, first.Total))
		}
	}
	switch {
	case len(missing) == 1:
		return fmt.Errorf("%w: shard %s is missing: its cases are in no report", ErrMerge, missing[0])
	case len(missing) > 1:
		return fmt.Errorf("%w: shards %s are missing: their cases are in no report", ErrMerge, strings.Join(missing, ", "))
	}
	return nil
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
