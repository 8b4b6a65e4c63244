//go:build cgo

package ldref

/*
#cgo LDFLAGS: -lm
#include <float.h>
#include <math.h>

static long double rx_ld_ref(int op, double x) {
	long double v = (long double)x;
	switch (op) {
	case 0: return expl(v);
	case 1: return logl(v);
	case 2: return tanhl(v);
	case 3: return sqrtl(v);
	case 4: return 1.0L / (1.0L + expl(-v));
	}
	return NAN;
}

// rx_ld_ulps: |got - ref| in float64 units in the last place of ref (the
// spacing of doubles at |ref|, 2^-1074 for subnormals); 0 when both are
// the same NaN or infinity, or ref is beyond the double range and got is
// the infinity it rounds to; INFINITY for any other non-finite disagreement.
static double rx_ld_ulps(int op, double x, double got) {
	long double r = rx_ld_ref(op, x);
	if (isnan(r)) {
		return isnan(got) ? 0 : INFINITY;
	}
	double rd = (double)r;
	if (isinf(rd)) {
		return got == rd ? 0 : INFINITY;
	}
	if (isnan(got) || isinf(got)) {
		return INFINITY;
	}
	int e = 0;
	frexpl(r, &e);
	int k = e - 53;
	if (k < -1074) {
		k = -1074;
	}
	return (double)(fabsl((long double)got - r) / ldexpl(1.0L, k));
}

static float rx_ld_f32(int op, double x) { return (float)rx_ld_ref(op, x); }
static int rx_ld_mant(void) { return LDBL_MANT_DIG; }
*/
import "C"

// Op is a function of the reference.
type Op int

// The functions, as the oracle's builtins define them.
const (
	Exp     Op = iota // e^x
	Log               // natural logarithm; NaN below 0, -Inf at 0
	Tanh              // hyperbolic tangent
	Sqrt              // square root; NaN below 0
	Sigmoid           // 1/(1+e^-x), in long double
)

// String names op as the builtin it checks.
func (op Op) String() string {
	return [...]string{"Exp", "Log", "Tanh", "Sqrt", "Sigmoid"}[op]
}

// ULPs returns the distance between got and op(x) evaluated in long
// double, in float64 units in the last place of the reference (the
// spacing of doubles at its magnitude; 2^-1074 for subnormals). It is 0
// when both are the same NaN or infinity, or when the reference lies
// beyond the float64 range and got is the infinity it rounds to, and +Inf
// for any other disagreement about a non-finite value.
func ULPs(op Op, x, got float64) float64 {
	return float64(C.rx_ld_ulps(C.int(op), C.double(x), C.double(got)))
}

// Float32 returns op(x) evaluated in long double and rounded to float32
// once: the correctly rounded float32 result, unless the exact value lies
// within a long double rounding error of a float32 rounding boundary.
func Float32(op Op, x float64) float32 {
	return float32(C.rx_ld_f32(C.int(op), C.double(x)))
}

// Precision is the number of significand bits of the C long double (64 on
// x86-64, 113 where it is IEEE quad, 53 where it is only a double, which
// makes the reference no more precise than the oracle).
func Precision() int { return int(C.rx_ld_mant()) }
