// Package pyexport writes a lowered program (program/ir) as the Python
// module a model author would write: PyTorch (format Torch) or NumPy
// (format NumPy), one function per .rx function with the same parameter
// and result names, a for as a for, an if as an if, and each op as the
// call a person writes (x @ w, torch.tanh(x), torch.softmax(x, 1),
// np.argmax(x, axis=1)). It also holds the executors that run such a
// module in a long-lived Python process over rxeq.executor/v1: pytorch
// (eager), torchscript (each function through torch.jit.script) and
// numpy (see Executor).
//
// # The generated module
//
// Export is deterministic: the same program and Options give the same
// bytes. The module starts with a header naming the source file and
// rxeq's version, imports only torch (and typing) or numpy, and defines
// three small helpers before the scoring functions:
//
//   - checked_rem(a, b, func, lhs, pos) and checked_div(…): .rx's
//     CheckedRem and CheckedDiv with Go's truncating semantics. They test
//     the divisor before dividing (TorchScript's integer division by zero
//     is a SIGFPE, not an exception) and raise ZeroDivisionError or
//     OverflowError whose text is rxeq's shared error text, e.g.
//     "score_divisor: CheckedRem: division by zero (round_idx=0) at
//     scenarios/error.rx:21:6".
//   - i64(v): v wrapped to int64, as .rx's integer + - * wrap (Go's
//     two's complement). It is written around integer arithmetic only where
//     the operands' bounds do not already rule out overflow (a loop index
//     of a constant loop plus a small constant needs none). Under
//     TorchScript ints are int64 already and i64 returns v.
//
// Integer scalars (loop indices, int64 parameters, conditions) are Python
// ints; && and || are Python's and/or, which short-circuit like Go's.
// Float literals are written as Python floats next to a tensor (x * 0.5:
// the framework rounds the scalar to float32 once, as rxeq's float32
// executors do); where no tensor operand is there to carry the dtype, a
// literal becomes torch.tensor(0.5) (float32, PyTorch's default dtype) or
// np.float32(0.5), because NumPy 1.x computes np.float32 scalar ⊕ Python
// float in float64.
//
// Names: a .rx name that is a safe ASCII Python identifier (not a keyword,
// not a builtin, not one of the module's own names torch, np, Tuple,
// checked_rem, checked_div, i64, softmax, log_softmax, sigmoid) is kept;
// any other name becomes "rx_" followed by an injective encoding (ASCII
// letters and digits stay, "_" is "__", any other rune "_hex_"), and a
// local whose name is already taken in the function (Go's shadowing of an
// outer variable) gets a "_N" suffix. Strings from the program (function
// names, dividend texts, positions, the file name) reach the module only
// as escaped ASCII string literals or comments.
//
// docs/python.md describes the formats, the executors and what differs
// between the frameworks and rxeq's contract.
package pyexport
