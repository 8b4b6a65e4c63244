package tensor

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// ErrDist is the kind of every error about a malformed distribution.
var ErrDist = errors.New("bad distribution")

// DistKind names a family of input distributions.
type DistKind uint8

// The distributions an //rx:input directive can name.
const (
	Normal  DistKind = iota + 1 // normal(mean, std)
	Uniform                     // uniform(lo, hi), half-open [lo, hi)
	Const                       // const(v)
	Edge                        // edge(kind): adversarial data, see EdgeKinds
)

// EdgeKinds lists the adversarial families edge(kind) accepts:
//
//   - large: magnitudes near 1e4 with random signs (softmax stability);
//   - ties: values drawn from {-1, 0, 1}, so rows tie often;
//   - zeros: all zero;
//   - tiny: magnitudes near 1e-30 (float32 subnormal territory after products);
//   - specials: IEEE special values mixed with ordinary ones: NaN, ±Inf,
//     ±0, the smallest and the largest float32 subnormals (±1.4e-45,
//     ±1.18e-38), ±0.5, ±1 and ±2.5, each drawn one time in 18, and
//     normal(0, 2) draws the other three times in 18;
//   - overflow: magnitudes uniform in [40, 100] with random signs, where
//     naive formulas break (tanh as a ratio of exponentials above about 44,
//     exp overflowing float32 above 88.7);
//   - huge: magnitudes log-uniform in [1e36, 3e38] with random signs, near
//     the float32 maximum (sums and products overflow to ±Inf);
//   - signedzeros: +0 and −0, each with probability 1/2, so that
//     Maximum, Minimum, Max and Relu meet zeros of both signs;
//   - nanpos: normal(0, 2) values with, in each row (the last axis), a
//     NaN, +Inf or −Inf at the first, the middle or the last position,
//     or at several positions (reductions and Argmax see a special value
//     wherever a kernel's vector body or tail has it);
//   - infrows: rows (the last axis) that are all −Inf, rows that hold a
//     +Inf among ordinary values, and ordinary rows (Softmax and
//     LogSoftmax of rows with no finite maximum);
//   - expedge: magnitudes near the overflow of exp in float32 (88.0 to
//     89.5) and near where Sigmoid and Tanh saturate (17 to 19.5), with
//     random signs;
//   - logedge: +0, −0, the smallest and largest subnormals, negative
//     values and small positive ones (Log and Sqrt at and below 0).
var EdgeKinds = []string{"large", "ties", "zeros", "tiny", "specials", "overflow", "huge",
	"signedzeros", "nanpos", "infrows", "expedge", "logedge"}

// logEdges are the values edge(logedge) draws from.
var logEdges = []float64{
	0, math.Copysign(0, -1), math.SmallestNonzeroFloat32, 0x1.fffffcp-127, -math.SmallestNonzeroFloat32,
	-1, -0.5, -3, 1e-30, 0.25, 1, 2,
}

// specials are the values edge(specials) draws from (see EdgeKinds).
var specials = []float64{
	math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1),
	math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
	0x1.fffffcp-127, -0x1.fffffcp-127, // the largest subnormals
	0.5, -0.5, 1, -1, 2.5, -2.5,
}

// Dist is a parsed input distribution.
type Dist struct {
	Kind DistKind
	A, B float64 // normal: mean, std; uniform: lo, hi; const: value in A
	Edge string  // edge: one of EdgeKinds
}

// String prints the distribution in the directive's own syntax.
func (d Dist) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch d.Kind {
	case Normal:
		return "normal(" + f(d.A) + ", " + f(d.B) + ")"
	case Uniform:
		return "uniform(" + f(d.A) + ", " + f(d.B) + ")"
	case Const:
		return "const(" + f(d.A) + ")"
	case Edge:
		return "edge(" + d.Edge + ")"
	}
	return "invalid"
}

// ParseDist parses "normal(0, 1)", "uniform(-0.1, 0.1)", "const(2)" or
// "edge(large)". The error says which form was expected.
func ParseDist(s string) (Dist, error) {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open <= 0 || !strings.HasSuffix(s, ")") {
		return Dist{}, fmt.Errorf("%w: %q: want NAME(args) with NAME one of normal, uniform, const, edge", ErrDist, s)
	}
	name, body := s[:open], s[open+1:len(s)-1]
	var args []string
	if strings.TrimSpace(body) != "" {
		for _, a := range strings.Split(body, ",") {
			args = append(args, strings.TrimSpace(a))
		}
	}
	nums := func(want int, usage string) ([]float64, error) {
		if len(args) != want {
			return nil, fmt.Errorf("%w: %q: %s takes %d argument(s): %s", ErrDist, s, name, want, usage)
		}
		out := make([]float64, want)
		for i, a := range args {
			v, err := strconv.ParseFloat(a, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: %q: argument %d (%q) is not a finite number: %s", ErrDist, s, i+1, a, usage)
			}
			out[i] = v
		}
		return out, nil
	}
	switch name {
	case "normal":
		v, err := nums(2, "normal(mean, std) with std >= 0")
		if err != nil {
			return Dist{}, err
		}
		if v[1] < 0 {
			return Dist{}, fmt.Errorf("%w: %q: std must be >= 0", ErrDist, s)
		}
		return Dist{Kind: Normal, A: v[0], B: v[1]}, nil
	case "uniform":
		v, err := nums(2, "uniform(lo, hi) with lo <= hi")
		if err != nil {
			return Dist{}, err
		}
		if v[0] > v[1] {
			return Dist{}, fmt.Errorf("%w: %q: lo must be <= hi", ErrDist, s)
		}
		return Dist{Kind: Uniform, A: v[0], B: v[1]}, nil
	case "const":
		v, err := nums(1, "const(value)")
		if err != nil {
			return Dist{}, err
		}
		return Dist{Kind: Const, A: v[0]}, nil
	case "edge":
		if len(args) != 1 {
			return Dist{}, fmt.Errorf("%w: %q: edge takes 1 argument, one of %s", ErrDist, s, strings.Join(EdgeKinds, ", "))
		}
		for _, k := range EdgeKinds {
			if args[0] == k {
				return Dist{Kind: Edge, Edge: k}, nil
			}
		}
		return Dist{}, fmt.Errorf("%w: %q: unknown edge kind %q, want one of %s", ErrDist, s, args[0], strings.Join(EdgeKinds, ", "))
	}
	return Dist{}, fmt.Errorf("%w: %q: unknown distribution %q, want one of normal, uniform, const, edge", ErrDist, s, name)
}

// DeriveSeed mixes a scenario seed with a case name (for example
// "small-batch-scoring/score_linear/b16/x") into the seed of one generator.
// It is SHA-256 based, so it is the same on every machine and Go version.
func DeriveSeed(scenarioSeed uint64, caseName string) uint64 {
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], scenarioSeed)
	h := sha256.New()
	h.Write(buf[:])
	h.Write([]byte(caseName))
	sum := h.Sum(nil)
	return binary.LittleEndian.Uint64(sum[:8])
}

// Generate fills a new float32 tensor of the given shape from d, using a
// PCG generator seeded with seed (never the global source). Values are drawn
// in float64 and rounded to float32 once.
func Generate(d Dist, seed uint64, shape ...int) *Tensor {
	t := NewFloat32(shape...)
	rng := rand.New(rand.NewPCG(seed, 0x72786571)) // "rxeq"
	if d.Kind == Edge && (d.Edge == "nanpos" || d.Edge == "infrows") {
		row := 1
		if len(shape) > 0 {
			row = max(shape[len(shape)-1], 1)
		}
		for lo := 0; lo < len(t.F32); lo += row {
			fillRow(d.Edge, t.F32[lo:min(lo+row, len(t.F32))], rng)
		}
		return t
	}
	for i := range t.F32 {
		t.F32[i] = float32(draw(d, rng))
	}
	return t
}

// fillRow fills one row (the last axis) of an edge(nanpos) or
// edge(infrows) tensor.
func fillRow(kind string, row []float32, rng *rand.Rand) {
	for i := range row {
		row[i] = float32(2 * rng.NormFloat64())
	}
	n := len(row)
	switch kind {
	case "nanpos":
		special := []float32{float32(math.NaN()), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[rng.IntN(4)]
		switch rng.IntN(5) {
		case 0:
			row[0] = special
		case 1:
			row[n/2] = special
		case 2:
			row[n-1] = special
		case 3:
			for range 2 + rng.IntN(3) {
				row[rng.IntN(n)] = special
			}
		default: // an ordinary row now and then
		}
	case "infrows":
		switch rng.IntN(3) {
		case 0:
			for i := range row {
				row[i] = float32(math.Inf(-1))
			}
		case 1:
			row[rng.IntN(n)] = float32(math.Inf(1))
		}
	}
}

func draw(d Dist, rng *rand.Rand) float64 {
	switch d.Kind {
	case Normal:
		return d.A + d.B*rng.NormFloat64()
	case Uniform:
		return d.A + (d.B-d.A)*rng.Float64()
	case Const:
		return d.A
	case Edge:
		sign := 1.0
		if rng.IntN(2) == 0 {
			sign = -1
		}
		switch d.Edge {
		case "large":
			return sign * (9e3 + 2e3*rng.Float64())
		case "ties":
			return float64(rng.IntN(3) - 1)
		case "zeros":
			return 0
		case "tiny":
			return sign * (1e-30 + 9e-30*rng.Float64())
		case "specials":
			if k := rng.IntN(len(specials) + 3); k < len(specials) {
				return specials[k]
			}
			return 2 * rng.NormFloat64()
		case "overflow":
			return sign * (40 + 60*rng.Float64())
		case "huge":
			return sign * math.Exp(math.Log(1e36)+(math.Log(3e38)-math.Log(1e36))*rng.Float64())
		case "signedzeros":
			return math.Copysign(0, sign)
		case "expedge":
			if rng.IntN(2) == 0 {
				return sign * (88 + 1.5*rng.Float64())
			}
			return sign * (17 + 2.5*rng.Float64())
		case "logedge":
			return logEdges[rng.IntN(len(logEdges))]
		}
	}
	return 0
}
