// Package codegen is the one walk over a lowered IR function (program/ir)
// that the generated-code exports share: pyexport's Python (PyTorch and
// NumPy) and jsexport's JavaScript (TensorFlow.js). Its job is the
// structure of the generated function, written once:
//
//   - naming: every parameter, result and variable gets a unique
//     identifier of the host language (params and results first, so they
//     keep their .rx names); temps that must be stored get _tN;
//   - inlining: a temp read once becomes part of the expression that
//     reads it; one read more than once gets its own variable;
//   - ordering: before a variable is overwritten, every pending
//     expression that still reads its old value is stored first (`return
//     b, a` reads both before either result is written);
//   - control flow: a for stays a for and an if an if (else-if chains
//     included), and, for a language that folds them, the lowering of &&
//     and || becomes the language's and/or again;
//   - checked arithmetic: a CheckedRem or CheckedDiv without its error
//     site is refused before any text is written.
//
// An Emitter supplies the text: each op's expression, an assignment, a
// loop header, an if header. Layout prints the statement tree with the
// language's indentation and block syntax. The package also holds the
// small pieces both exports write the same way around the walk (the
// signature line, the provenance of the header, the list of functions
// and their unique names, the file stem of a module).
package codegen
