package fuzz

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Config holds the generator's knobs. The zero value is usable: every
// field has a default (see the field docs).
type Config struct {
	// MaxFuncs bounds the functions per file (1..MaxFuncs; default 3).
	MaxFuncs int
	// MaxStmts bounds the top-level statements of a function body before
	// its results are assigned (default 8). Nested blocks get fewer.
	MaxStmts int
	// MaxDepth bounds the nesting of for and if statements (default 2).
	MaxDepth int
	// MaxExprDepth bounds the depth of an expression (default 3).
	MaxExprDepth int
	// Features, when not zero, is the exact feature set of every program.
	// When zero, each program draws its own subset (swarm testing): every
	// feature is on with probability 3/4, independently.
	Features Features
	// Exclude lists features no program uses, whether drawn or given
	// (for example a feature that trips a known, not yet fixed bug).
	Exclude Features
	// Edges makes every program edge-seeking (FeatEdges): values aimed at
	// the places frameworks differ instead of away from them; it also
	// makes the defaults of MaxFuncs 1 and of MaxStmts 4. Without it,
	// a program whose features are drawn (Features zero) is edge-seeking
	// with probability EdgeRate, unless Exclude holds FeatEdges.
	Edges bool
	// FailRate is the probability that a CheckedRem or CheckedDiv gets a
	// denominator that may be zero at run time (only with FeatMayFail;
	// default 0.2), so error paths are compared too.
	FailRate float64
}

func (c Config) withDefaults() Config {
	if c.MaxFuncs <= 0 {
		c.MaxFuncs = 3
		if c.Edges {
			c.MaxFuncs = 1 // small programs reduce fast and say what they found
		}
	}
	if c.MaxStmts <= 0 {
		c.MaxStmts = 8
		if c.Edges {
			c.MaxStmts = 4
		}
	}
	if c.MaxDepth < 0 {
		c.MaxDepth = 0
	} else if c.MaxDepth == 0 {
		c.MaxDepth = 2
	}
	if c.MaxExprDepth <= 0 {
		c.MaxExprDepth = 3
	}
	if c.FailRate <= 0 {
		c.FailRate = 0.2
	}
	return c
}

// ConfigFromBytes turns fuzzer bytes into a seed and a Config: the seed is
// the first 8 bytes (little-endian, zero-padded), and the following bytes,
// when present, pick MaxFuncs (1–4), MaxStmts (1–12), MaxDepth (0–3),
// MaxExprDepth (1–4) and, from the next 8 bytes, a fixed feature set
// (an all-zero set keeps the swarm draw). Any byte string is valid.
func ConfigFromBytes(data []byte) (uint64, Config) {
	var seedBytes [8]byte
	copy(seedBytes[:], data)
	seed := binary.LittleEndian.Uint64(seedBytes[:])
	rest := data[min(len(data), 8):]
	at := func(i int) (byte, bool) {
		if i < len(rest) {
			return rest[i], true
		}
		return 0, false
	}
	var cfg Config
	if b, ok := at(0); ok {
		cfg.MaxFuncs = 1 + int(b)%4
	}
	if b, ok := at(1); ok {
		cfg.MaxStmts = 1 + int(b)%12
	}
	if b, ok := at(2); ok {
		cfg.MaxDepth = int(b) % 4
		if cfg.MaxDepth == 0 {
			cfg.MaxDepth = -1 // explicitly flat
		}
	}
	if b, ok := at(3); ok {
		cfg.MaxExprDepth = 1 + int(b)%4
	}
	if len(rest) > 4 {
		var fb [8]byte
		copy(fb[:], rest[4:])
		cfg.Features = Features(binary.LittleEndian.Uint64(fb[:])) & AllFeatures
	}
	return seed, cfg
}

// Features is a set of language features a generated program may use.
type Features uint64

// The features. Plain assignment, + and the float tensor parameters are
// always available.
const (
	FeatMatMul       Features = 1 << iota // MatMul
	FeatTranspose                         // Transpose
	FeatTanh                              // Tanh
	FeatExp                               // Exp (of bounded arguments)
	FeatLog                               // Log (of Abs(x)+1 and Sigmoid)
	FeatSigmoid                           // Sigmoid
	FeatRelu                              // Relu
	FeatAbs                               // Abs
	FeatSqrt                              // Sqrt (of Abs(x)+1)
	FeatMaxMin                            // Maximum, Minimum
	FeatSoftmax                           // Softmax
	FeatLogSoftmax                        // LogSoftmax
	FeatReduce                            // Sum, Mean, Max along an axis
	FeatKeepDims                          // Sum/Mean/Max(x, axis, true) broadcast back
	FeatArgmax                            // int64 class results: Argmax of a float result
	FeatSubMulDiv                         // - * / on tensors
	FeatNeg                               // unary - on tensors
	FeatLiterals                          // float literals and constants in tensor expressions
	FeatFor                               // for i := range N (constant N)
	FeatForParam                          // for i := range n with n an int64 parameter
	FeatIf                                // if / else on integer conditions
	FeatElseIf                            // else if chains
	FeatIntLocals                         // int64 scalar locals and results, integer arithmetic
	FeatReassign                          // v = e on existing variables
	FeatCompound                          // v += e, v -= e, v *= e, v /= e
	FeatReturnValues                      // return e1, e2 instead of a bare return
	FeatEdgeInputs                        // edge(large|ties|zeros|tiny) input distributions
	FeatMayFail                           // CheckedRem/CheckedDiv denominators that may be zero
	FeatWrap                              // integer arithmetic near MaxInt64 (wrapping, MinInt64/-1)
	FeatEarlyResults                      // results assigned early and used as variables
	FeatRank3                             // rank-3 parameters
	FeatNaN                               // Sqrt and Log of raw parameters: NaN and -Inf where inputs are negative or zero
	FeatSpecials                          // edge(specials) inputs: NaN, ±Inf, ±0 and subnormals among ordinary values
	FeatClassSteer                        // Argmax of a rank-1 float parameter as an int64 value that steers control flow
	FeatExpOverflow                       // Exp of arguments far above 88.7, overflowing float32 where float64 stays finite
	FeatEdges                             // edge-seeking values and shapes (see Config.Edges); never drawn by the swarm's 3/4 rule
	FeatForLocal                          // for i := range n with n an int64 local declared before the loop, which the body assigns

	featEnd
	// AllFeatures is every feature.
	AllFeatures = featEnd - 1
)

var featureNames = []string{
	"matmul", "transpose", "tanh", "exp", "log", "sigmoid", "relu", "abs", "sqrt", "maxmin",
	"softmax", "logsoftmax", "reduce", "keepdims", "argmax", "submuldiv", "neg", "literals",
	"for", "forparam", "if", "elseif", "intlocals", "reassign", "compound", "returnvalues",
	"edgeinputs", "mayfail", "wrap", "earlyresults", "rank3", "nan", "specials", "classsteer", "expoverflow",
	"edges", "forlocal",
}

// EdgeRate is the probability that a program whose features are drawn is
// edge-seeking (FeatEdges), decided apart from the other features so that
// the swarm's draw of every other program stays as it was.
const EdgeRate = 1.0 / 8

// ParseFeatures reads a comma-separated list of feature names, as
// Features.String writes them ("tanh,matmul,for"); "all" names every
// feature and "" none. An unknown name is an error that lists the known
// ones.
func ParseFeatures(list string) (Features, error) {
	var f Features
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if name == "all" {
			f |= AllFeatures
			continue
		}
		i := slices.Index(featureNames, name)
		if i < 0 {
			return 0, fmt.Errorf("unknown feature %q (known: all,%s)", name, AllFeatures)
		}
		f |= 1 << i
	}
	return f, nil
}

// Has reports whether every feature of g is in f.
func (f Features) Has(g Features) bool { return f&g == g }

// String lists the features by name, separated by commas.
func (f Features) String() string {
	var names []string
	for i, n := range featureNames {
		if f&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

// drawFeatures draws a swarm subset: each feature on with probability
// 3/4, but FeatEdges and FeatForLocal, which Generate draws apart so
// that the stream every other program is generated from stays as it was.
func drawFeatures(rng *rand.Rand) Features {
	var f Features
	for i := range featureNames {
		if f := Features(1) << i; f == FeatEdges || f == FeatForLocal {
			continue // drawn by Generate from generators of their own
		}
		if rng.IntN(4) != 0 {
			f |= 1 << i
		}
	}
	return f
}
