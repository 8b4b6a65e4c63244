package fuzz

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// DefaultNoiseRuns is the number of stochastic-rounding runs of the oracle
// per function and batch when Checker.NoiseRuns is 0.
const DefaultNoiseRuns = 3

// NoiseFactor multiplies the spread of the noise runs when it widens an
// element's tolerance: an executor rounding to nearest errs less than
// stochastic rounding does on average, and three runs can underestimate
// the spread; four times the largest deviation seen leaves room for both.
const NoiseFactor = 4

// sensitivity is what the stochastic-rounding runs of the oracle say about
// one function at one batch: per output and element, how far float32
// rounding moved the result away from the exact one.
type sensitivity struct {
	// spread is, for float outputs, the largest |noisy − exact| over the
	// runs (0 where every run agreed exactly).
	spread map[string][]float64
	// unstable marks elements whose class (NaN, +Inf, −Inf, finite) or,
	// for int64 outputs, whose value changed in some run: float32 rounding
	// alone can flip them, so no executor is held to the exact result.
	unstable map[string][]bool
}

// probe runs fn n times through the oracle with its float32 rounding
// points on, once to nearest (oracle.Options.Nearest) and n−1 times
// stochastically (oracle.Options.Noise), and measures how far each output element
// moves from want, the exact run. A run that fails is ignored: noise does
// not touch integer arithmetic, so only an internal failure could differ.
func probe(ctx context.Context, fn *program.Func, inputs map[string]*tensor.Tensor, want map[string]*tensor.Tensor, seed uint64, n int) (*sensitivity, error) {
	s := &sensitivity{spread: map[string][]float64{}, unstable: map[string][]bool{}}
	for k := range n {
		// The first run rounds to nearest, as the executors do; the others
		// at random.
		opts := oracle.Options{Nearest: true}
		if k > 0 {
			opts = oracle.Options{Noise: rand.New(rand.NewPCG(seed, uint64(k)))}
		}
		noisy, err := oracle.RunWith(ctx, fn, inputs, opts)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			continue
		}
		for name, w := range want {
			g := noisy[name]
			if g == nil || len(g.Shape) != len(w.Shape) || g.Len() != w.Len() {
				continue
			}
			unstable := s.unstable[name]
			if unstable == nil {
				unstable = make([]bool, w.Len())
				s.unstable[name] = unstable
			}
			switch w.DType {
			case tensor.Int64:
				for i, x := range w.I64 {
					if g.I64[i] != x {
						unstable[i] = true
					}
				}
			case tensor.Float64:
				spread := s.spread[name]
				if spread == nil {
					spread = make([]float64, w.Len())
					s.spread[name] = spread
				}
				for i, x := range w.F64 {
					y := g.F64[i]
					if class(x) != class(y) {
						unstable[i] = true
						continue
					}
					if d := math.Abs(y - x); d > spread[i] {
						spread[i] = d
					}
				}
			}
		}
	}
	return s, nil
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

// relax returns got with every element that disagrees at the plain
// tolerance but that the noise excuses replaced by the reference's value,
// and how many it replaced: elements s marks unstable, and float elements
// within the output's tolerance widened by NoiseFactor times their
// spread. Only the outputs named in only are relaxed. The comparison that
// follows then judges only what float32 rounding cannot explain. got is
// not modified.
func (s *sensitivity) relax(got, want map[string]*tensor.Tensor, tols map[string]harness.Tolerance, only map[string]bool) (map[string]*tensor.Tensor, int) {
	if s == nil {
		return got, 0
	}
	out := make(map[string]*tensor.Tensor, len(got))
	excused := 0
	for name, g := range got {
		out[name] = g
		w := want[name]
		if !only[name] || w == nil || g.Len() != w.Len() || len(g.Shape) != len(w.Shape) {
			continue
		}
		unstable, spread, tol := s.unstable[name], s.spread[name], tols[name]
		var c *tensor.Tensor
		replace := func(i int) {
			if c == nil {
				c = g.Clone()
				out[name] = c
			}
			switch {
			case c.DType == tensor.Int64 && w.DType == tensor.Int64:
				c.I64[i] = w.I64[i]
			case c.DType == tensor.Float32 && w.DType == tensor.Float64:
				c.F32[i] = float32(w.F64[i])
			}
			excused++
		}
		floats := g.DType == tensor.Float32 && w.DType == tensor.Float64
		for i := range g.Len() {
			switch {
			case g.DType == tensor.Int64 && w.DType == tensor.Int64:
				if unstable != nil && unstable[i] && g.I64[i] != w.I64[i] {
					replace(i)
				}
			case floats:
				x, y := w.F64[i], float64(g.F32[i])
				plain := tol.ATol + tol.RTol*math.Abs(x)
				if class(x) == class(y) && (class(x) != 0 || math.Abs(y-x) <= plain) {
					continue // agrees without help
				}
				if unstable != nil && unstable[i] {
					replace(i)
				} else if spread != nil && class(x) == 0 && class(y) == 0 && math.Abs(y-x) <= plain+NoiseFactor*spread[i] {
					replace(i)
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
