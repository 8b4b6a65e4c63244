// Package program is rxeq's language front end: it parses .rx files (valid
// Go syntax, read with go/parser), checks them (element types, shapes with
// constant, named-constant and symbolic dimensions, broadcasting, the //rx:
// directives) into a typed tree, and lowers that tree to the IR of package
// ir.
//
// Parse does parsing and checking in one step and returns every independent
// error of a file, in position order, as an ErrorList whose entries print as
// "file:line:col: message". ParseScenario adds the rules a file must meet to
// run as a scenario (see below); `rxeq check` and `rxeq run` both use it, so
// check accepts exactly what run can run. Lower turns a checked File into
// an ir.Program. ReadFile reads a file for them, refusing what is not a
// regular file (/dev/zero, a FIFO) and anything over MaxFileSize.
//
// Decisions where DESIGN.md is silent, made here and tested:
//
//   - A name may not be redeclared, and a block may not shadow a name of an
//     enclosing one: every name in a function means one thing.
//   - `return` is allowed only as the last statement of a function body.
//   - Integer +, - and * wrap on overflow (as Go); integer / and % are only
//     available as CheckedDiv and CheckedRem. CheckedRem(MinInt64, -1) is 0,
//     as in Go; CheckedDiv(MinInt64, -1) is an overflow error.
//   - Axis arguments may be negative, counting from the end as in NumPy.
//   - An integer literal or named constant used where a float32 is expected
//     is a float constant.
//   - A symbolic dimension equals only itself until the checker unifies it:
//     MatMul's inner dimensions, broadcasting against a non-1 size, and
//     assignment to a declared result all bind a symbol to the other side. A
//     symbol bound to two different sizes is an error naming both places.
//   - The bound of `for i := range N` is an integer constant expression
//     (literals and constants with + - * and parentheses: 4, -3, 2*F), an
//     int64 scalar parameter or an int64 scalar local variable. As in Go,
//     N <= 0 runs no iteration, whether N is a literal (range -3), a
//     constant (const N = -3), a parameter or a local, and N is read once,
//     before the first iteration: a body that assigns a local N (n = n - 1)
//     changes the variable, not the number of trips.
//   - No tensor may hold more than 2^60 - 1 elements (tensor.MaxElements),
//     so that its size in bytes fits in int64 at 8 bytes per element for
//     every dtype (8 is the widest, and the oracle holds float32 tensors as
//     float64). The checker sizes every parameter, result and intermediate
//     with the batch symbol (Func.BatchSymbol) at the largest //rx:batches
//     (1 without it) and other symbols at 1, and reports each too-large
//     shape once, where it first appears. At run time every executor checks
//     the shapes again with the bound dimensions (ir.CheckSizes).
//   - An int64 parameter's //rx:input const(N) needs an integer N with
//     |N| <= 2^53 (MaxInputInt): distribution arguments are float64.
//   - Limits keep checking linear in the size of the file: at most
//     MaxFileSize bytes (1 MiB); expressions nest at most MaxDepth (256)
//     deep, counting calls, parentheses, unary operators and right operands
//     (a chain a + b + c + … is flat); blocks nest at most MaxDepth deep (an
//     else-if chain is flat). A function over the depth limit is reported
//     there and its body is not checked further. Before parsing, brackets
//     nested, or prefix operators chained, more than 16,384 deep refuse
//     the file (go/parser recurses once per level, up to 100,000 levels).
//     A message quotes at most 120 bytes of an expression's source.
//
// ParseScenario's rules, for files that run as scenarios with no
// dimensions bound from outside: at least one function; an //rx:input for
// every parameter; parameters are float32 tensors or int64 scalars (what
// the input generators make); and no free symbolic dimension other than
// the batch one, which //rx:batches binds. The library (harness.Options.Dims)
// can bind more and uses Parse.
package program
