package fuzz

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// DefaultNoiseRuns is the number of oracle runs with rounding to float32
// per function and batch when Checker.NoiseRuns is 0: one to nearest and
// the others stochastic.
const DefaultNoiseRuns = 3

// NoiseFactor scales the range of the noise runs when it widens what
// counts as a plausible float32 result: an executor's rounding errors
// need not fall inside the few samples drawn, so the range is stretched
// by NoiseFactor times its width on each side.
const NoiseFactor = 4

// samples are the outputs of one function at one batch computed by the
// exact oracle and by its noise runs: the values float32 rounding alone
// can produce.
type samples []map[string]*tensor.Tensor

// probe runs fn through the exact oracle and then n times with its
// float32 rounding points on, once to nearest (oracle.Options.Nearest)
// and n−1 times stochastically (oracle.Options.Noise). The exact run is
// the oracle's own, not the reference's, so a reference that is wrong
// does not widen anything. A run that fails is left out: rounding does
// not touch integer arithmetic, so only an internal failure could differ.
func probe(ctx context.Context, fn *program.Func, inputs map[string]*tensor.Tensor, seed uint64, n int) (samples, error) {
	var s samples
	for k := range n + 1 {
		var opts oracle.Options
		switch {
		case k == 1:
			opts.Nearest = true
		case k > 1:
			opts.Noise = rand.New(rand.NewPCG(seed, uint64(k)))
		}
		out, err := oracle.RunWith(ctx, fn, inputs, opts)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err == nil {
			s = append(s, out)
		}
	}
	return s, nil
}

// plausibleInt reports whether some sample has v at element i of output
// name.
func (s samples) plausibleInt(name string, i int, v int64) bool {
	for _, run := range s {
		if t := run[name]; t != nil && t.DType == tensor.Int64 && i < len(t.I64) && t.I64[i] == v {
			return true
		}
	}
	return false
}

// plausibleFloat reports whether v could be element i of output name
// after float32 rounding: a NaN or an infinity that some sample shows, or
// a finite value within the range [lo, hi] of the finite samples
// stretched by tol.Allowed(v) plus NoiseFactor·(hi − lo) on each side.
func (s samples) plausibleFloat(name string, i int, v float64, tol compare.Tolerance) bool {
	lo, hi, finite := math.Inf(1), math.Inf(-1), false
	for _, run := range s {
		t := run[name]
		if t == nil || t.DType != tensor.Float64 || i >= len(t.F64) {
			continue
		}
		x := t.F64[i]
		if class(x) != 0 {
			if class(x) == class(v) {
				return true
			}
			continue
		}
		lo, hi, finite = math.Min(lo, x), math.Max(hi, x), true
	}
	if !finite || class(v) != 0 {
		return false
	}
	m := tol.Allowed(v) + NoiseFactor*(hi-lo)
	return lo-m <= v && v <= hi+m
}

// class is 0 for a finite value, 1 for NaN, 2 for +Inf and 3 for −Inf.
func class(x float64) int {
	switch {
	case math.IsNaN(x):
		return 1
	case math.IsInf(x, 1):
		return 2
	case math.IsInf(x, -1):
		return 3
	}
	return 0
}

// floatAt is element i of a float32 or float64 tensor.
func floatAt(t *tensor.Tensor, i int) float64 {
	if t.DType == tensor.Float32 {
		return float64(t.F32[i])
	}
	return t.F64[i]
}

// relax returns want with every element of the outputs named in only
// that the samples excuse set to the executor's value, and how many it
// set. An element is excused when it disagrees at the plain tolerance
// but both the reference's and the executor's values are plausible
// float32 results of it (samples.plausibleFloat, plausibleInt): rounding
// noise explains the difference, whichever side is nearer the exact
// value. The comparison that follows then judges only what rounding
// cannot explain. want and got are not modified.
func (s samples) relax(got, want map[string]*tensor.Tensor, tols map[string]compare.Tolerance, only map[string]bool) (map[string]*tensor.Tensor, int) {
	out := make(map[string]*tensor.Tensor, len(want))
	excused := 0
	for name, w := range want {
		out[name] = w
		g := got[name]
		if !only[name] || g == nil || g.Len() != w.Len() || len(g.Shape) != len(w.Shape) {
			continue
		}
		var c *tensor.Tensor // the copy of w, once an element is excused
		excuse := func(i int) {
			if c == nil {
				c = w.Clone()
				out[name] = c
			}
			excused++
		}
		tol := tols[name]
		switch {
		case w.DType == tensor.Int64 && g.DType == tensor.Int64:
			for i, x := range w.I64 {
				if y := g.I64[i]; y != x && s.plausibleInt(name, i, x) && s.plausibleInt(name, i, y) {
					excuse(i)
					c.I64[i] = y
				}
			}
		case w.DType != tensor.Int64 && g.DType == tensor.Float32:
			for i := range w.Len() {
				x, y := floatAt(w, i), float64(g.F32[i])
				if class(x) == class(y) && (class(x) != 0 || math.Abs(y-x) <= tol.Allowed(x)) {
					continue // agrees without help
				}
				if s.plausibleFloat(name, i, x, tol) && s.plausibleFloat(name, i, y, tol) {
					excuse(i)
					if c.DType == tensor.Float32 {
						c.F32[i] = g.F32[i]
					} else {
						c.F64[i] = y
					}
				}
			}
		}
	}
	return out, excused
}

// noiseSeed is the seed of the noise runs of one function at one batch.
func noiseSeed(seed uint64, fn string, batch int) uint64 {
	return tensor.DeriveSeed(seed, fmt.Sprintf("noise/%s/b%d", fn, batch))
}
