// Package jsexport writes a lowered program (program/ir) as the
// TensorFlow.js module a model author would write: one CommonJS module,
// a function per .rx function with the same parameter and result names,
// a for as a for, an if as an if, and each op as the tf.* call a TF.js
// user writes (tf.add(tf.matMul(x, w), b), tf.softmax(logits),
// tf.argMax(probs, 1)). It also holds the executors that run such a
// module in a long-lived node process over rxeq.executor/v1: tfjs-cpu
// (TF.js's cpu backend, kernels in JavaScript) and tfjs-wasm (its wasm
// backend, XNNPACK compiled to WebAssembly, on one thread), and Repro,
// the standalone repro.js of a failing case. It is the third language of
// the generated-code executors, beside package pyexport's Python: the
// same protocol client and supervisor (package external), the same
// prepare-time export (external.Options.Generate), the same reproducer
// contract.
//
// # The generated module
//
// Export is deterministic: the same program and Options give the same
// bytes. The module starts with a header naming the source file and
// rxeq's version, requires only @tensorflow/tfjs-core (the caller loads
// and selects a backend), and defines small helpers before the scoring
// functions:
//
//   - RxeqError, an Error with rxeq's error kind;
//   - checkedRem(a, b, func, lhs, pos) and checkedDiv(…): .rx's
//     CheckedRem and CheckedDiv over BigInt, whose % and / truncate as
//     Go's do; they throw RxeqError with rxeq's shared text, e.g.
//     "score_divisor: CheckedRem: division by zero (round_idx=0) at
//     scenarios/error.rx:21:6";
//   - i64(v): BigInt.asIntN(64, v), .rx's wrapping integer + - *;
//   - int64(t): an int32 class tensor (TF.js has no int64) returned as
//     {dtype: 'int64', shape, data: BigInt64Array}.
//
// Each function's body runs inside tf.tidy, so no intermediate tensor
// outlives the call; it returns an object keyed by the result names.
// Integer scalars (loop indices, int64 parameters, conditions) are
// BigInts. A float literal beside a tensor is a JavaScript number (TF.js
// makes it a float32 scalar, rounding it once, as rxeq's float32
// executors do); alone it is tf.scalar(v). TF.js's softmax and
// logSoftmax take the last axis only: another axis is transposed to the
// last and back.
//
// Names: a .rx name that is a safe ASCII JavaScript identifier (not a
// reserved word, not a global the module uses, not one of its own names
// tf, i64, checkedRem, checkedDiv, int64, RxeqError, not starting with
// "_" or "rx_") is kept; any other becomes "rx_" followed by an
// injective encoding (ASCII letters and digits stay, "_" is "__", any
// other rune "_hex_"), and a local whose name is taken gets a "_N"
// suffix. Strings from the program reach the module only as escaped
// ASCII string literals or comments.
//
// # Where the packages come from
//
// The executors run node (DefaultNode, or ExecutorOptions.Node) with
// @tensorflow/tfjs-core, -backend-cpu and -backend-wasm TFJSVersion from
// ExecutorOptions.Dir (DefaultDir: os.UserCacheDir()/rxeq/tfjs/4.22.0,
// where ci/setup.sh installs tfjs/package-lock.json with npm ci
// --ignore-scripts). Available says why they cannot run, with the
// command that installs them.
//
// docs/tfjs.md describes the format, the executors, the op mapping and
// what the two backends compute differently from rxeq's contract and
// from each other.
package jsexport
