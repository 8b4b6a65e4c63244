// Package program is rxeq's language front end: it parses .rx files (valid
// Go syntax, read with go/parser), checks them (element types, shapes with
// constant, named-constant and symbolic dimensions, broadcasting, the //rx:
// directives) into a typed tree, and lowers that tree to the IR of package
// ir.
//
// Parse does parsing and checking in one step and returns every independent
// error of a file, in position order, as an ErrorList whose entries print as
// "file:line:col: message". Lower turns a checked File into an ir.Program.
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
package program
