// Package oracle is rxeq's reference executor: it evaluates a checked
// program.Func tree directly, in float64, with gonum. It never sees the IR,
// so a lowering bug cannot hide in the reference as well as in the
// executors it judges.
//
// Run binds the inputs with ir.BindInputs (the same checks, order and texts
// as every other executor), widens float32 inputs to float64, walks the
// function body and returns the results by name: float results as
// tensor.Float64 tensors, int64 results (Argmax classes, int scalars) as
// tensor.Int64 tensors (rank 0 for a scalar).
//
// Semantics, including every edge case the oracle decides:
//
//   - Float literals keep their float64 value (they are not rounded to
//     float32 as in the float32 executors).
//   - Binary + - * / and Maximum, Minimum broadcast as NumPy does: shapes
//     are aligned at the right, a dimension of size 1 stretches, a rank-0
//     operand (a literal) broadcasts everywhere. A pair of shapes that do not
//     broadcast is an internal error (the checker rejects it first).
//   - Integer + - * and unary - on int64 scalars wrap in two's complement
//     (-MinInt64 == MinInt64). Comparisons take int64 scalars and give a
//     bool; && and || short-circuit: the right operand is not evaluated when
//     the left decides, so a CheckedRem by zero there raises nothing.
//   - CheckedDiv(a, b) and CheckedRem(a, b) use ir.CheckedDivide and
//     ir.CheckedRemainder (Go's truncating semantics). b == 0 is an
//     ir.ErrDivisionByZero error, CheckedDiv(MinInt64, -1) an ir.ErrOverflow
//     error, both with the text of ir.CheckedError for the call's site;
//     CheckedRem(MinInt64, -1) is 0.
//   - MatMul multiplies with gonum's mat.Dense. gonum skips zero
//     multiplicands, which would turn 0*Inf and 0*NaN into 0 instead of NaN;
//     so when either operand holds a non-finite value the product is
//     computed with a plain triple loop that follows IEEE 754. An empty
//     inner dimension gives zeros; an empty outer dimension an empty result.
//   - Exp is math.Exp except in [709, 709.78], where amd64's math.Exp
//     overflows early (from 709.436): there it is exp(x-1)·e.
//     Sigmoid(x) = 1/(1+exp(-x)), and exp(x) below -40, where the two agree
//     to within 2^-54 and exp(-x) would overflow below -709.78. Both are
//     checked against the C library's long double functions (within 2 and
//     3 float64 ULP; every result rounds to the same float32). Relu(x) is x for x > 0, NaN for NaN and
//     +0 otherwise (so Relu(-0) = +0). Maximum and Minimum propagate NaN as
//     NumPy's do: a NaN on either side gives NaN, even against ±Inf (where
//     math.Max and math.Min return the infinity); otherwise they are
//     math.Max and math.Min, so +0 is greater than -0. Log and Sqrt of a
//     negative number are NaN and Log(0) is -Inf, as in package math.
//   - Softmax and LogSoftmax along an axis subtract the lane's maximum
//     before exponentiating, so logits near ±1e4 neither overflow nor
//     underflow to 0/0. The lane maximum propagates NaN (a NaN anywhere in a
//     lane makes the whole lane NaN); a lane whose maximum is +Inf or -Inf
//     is NaN throughout (Inf - Inf is NaN, and so is the lane's sum), as
//     the formula gives in IEEE 754.
//   - Sum adds a lane in order with gonum's floats.Sum; Mean is Sum / n;
//     Max propagates NaN (unlike floats.Max, which ignores a NaN that is not
//     first). Over an empty axis (a symbolic dimension bound to 0), Sum is 0,
//     Mean is NaN (0/0) and Max is -Inf, the identity of max. With KeepDims
//     the reduced axis stays with size 1.
//   - Argmax returns the first index of the lane's maximum (ties go to the
//     lowest index); if the lane holds a NaN, the first NaN's index, as
//     NumPy's argmax. Over an empty axis it is 0.
//   - For evaluates its count once, before the first iteration; a count <= 0
//     runs nothing. The index variable holds 0, 1, … at the start of each
//     iteration. If conditions are bools (bools exist only as conditions).
//   - A bare return returns the results as they stand; `return a, b`
//     evaluates every value before storing any, so `return b, a` swaps.
//   - ctx is checked before every statement; a cancelled context stops the
//     run with an error wrapping ctx.Err().
//
// # Noise runs
//
// RunWith with Options.Noise set evaluates the same tree as one sample of
// Monte Carlo arithmetic (Parker 1997; the "random rounding" of Verificarlo
// and CADNA): every value a float32 executor would round is computed in
// float64 and then stochastically rounded to the float32 grid, to the upper
// or lower neighbour with probabilities that make the rounding unbiased.
// Literals, + - * /, Exp, Log, Tanh, Sigmoid (one rounding of its result)
// and Sqrt round their results; MatMul rounds each product and each partial
// sum along the inner dimension; Sum and Mean round each partial sum of a
// lane, in order, and Mean its division; Softmax and LogSoftmax round the
// subtraction of the lane maximum, each exp, each partial sum, and then each
// quotient (Softmax) or the log and each final subtraction (LogSoftmax).
// Negation, Abs, Relu, Maximum, Minimum, Max, Argmax and Transpose are exact
// on float32 values and round nothing. Overflow and underflow follow from the
// rounding: a value past the float32 range becomes ±Inf, and 1e-30*1e-30
// becomes 0 (so a later 0 * -Inf is NaN where the exact run says -Inf).
//
// A few noise runs spread around the exact result by about the error that
// float32 rounding can cause in each output: little for a well-conditioned
// computation, much for a cancellation, a log(1+tiny) or a rounding error
// amplified through a loop. That spread is what a noise run is for. It is a
// sensitivity probe, not a float32 executor: it reproduces neither the
// round-to-nearest results, nor the summation order, blocking, fused
// multiply-adds or math library of any executor, and a float64 intermediate
// of a composite (the float64 sum before its rounding, say) is itself rounded
// once to float64 first. Its results are float64 tensors holding float32
// values. The same generator state gives the same results; the exact path
// (Run, or a nil Noise) is unchanged by all this.
//
// Anything the checker should have prevented (an unknown builtin, a shape
// that does not fit, a result never assigned) is an error of kind
// ErrInternal, never a panic; a panic in the evaluator is recovered at the
// Run boundary and reported the same way.
package oracle
