// Package fallback is rxeq's float32 interpreter for the lowered IR
// (program/ir), written in pure Go. It is the executor that runs where the
// native backend does not, and the second opinion the harness compares the
// native backend against.
//
// # Values
//
// Float values are dense row-major float32 tensors; integer values are
// int64 scalars (loop indices, constants, int64 parameters) or int64
// tensors (Argmax results); conditions are bools. The concrete shape of
// every value comes from its IR type with the symbolic dimensions bound by
// ir.BindInputs at the call boundary.
//
// Parameters are read only: the caller's input slices are never written,
// and no returned tensor shares memory with an input or with another
// result. A named result that the body never writes is returned as zeros
// (Go's zero value for a named result).
//
// # Numerics
//
//   - Arithmetic (+ - * /, negation, Abs, Relu, Maximum, Minimum, the
//     accumulations of MatMul, Sum, Softmax) is done in float32, one
//     rounding per operation. Products are converted to float32 explicitly
//     before they are added, so the Go compiler never fuses a multiply-add
//     (the native backend builds with -ffp-contract=off for the same
//     reason).
//   - Tanh, Exp, Log, Sigmoid and Sqrt are computed in float64 from the
//     float32 argument and rounded to float32 once. Sigmoid(x) is
//     1/(1+exp(-x)) evaluated entirely in float64.
//   - Float literals (ConstF) are rounded from float64 to float32 once.
//   - Add, Sub, Mul, Div, Maximum and Minimum broadcast as NumPy does; a
//     rank-0 operand broadcasts everywhere.
//   - Maximum and Minimum propagate NaN (NumPy's maximum/minimum); Relu(x)
//     is x for x > 0, NaN for NaN and +0 otherwise.
//   - MatMul accumulates each output in float32, adding the products for
//     k = 0, 1, 2, … in increasing order.
//   - Softmax and LogSoftmax subtract the maximum along the axis first
//     (stable), sum the exponentials in float32 in index order and divide
//     (Softmax) or subtract the float32 logarithm of the sum (LogSoftmax).
//   - Sum accumulates in float32 in index order; Mean is that sum divided by
//     the axis length in float32; Max propagates NaN. Along an empty axis
//     Sum is 0, Mean is NaN (0/0), Max is -Inf.
//   - Argmax returns the first index of the maximum; if the slice holds a
//     NaN, the index of the first NaN (NumPy). Along an empty axis it is 0.
//   - Integer + - * and negation wrap (two's complement). CheckedDiv and
//     CheckedRem fail with ir.CheckedError on a zero divisor, and
//     CheckedDiv also on MinInt64 / -1.
//
// # Control flow and errors
//
// A For reads its count once; a count <= 0 runs no iteration. The context
// is checked before the run and before every loop iteration; a cancelled
// run returns an *ir.RuntimeError whose kind is the context's error.
// Input validation is ir.BindInputs, so boundary errors have the same text
// as every other executor. Malformed IR is reported by New (or Run) as an
// error of kind ErrInternal or ir.ErrUnsupported; panics never escape.
package fallback
