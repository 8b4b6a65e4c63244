// Package executor is the executor layer's leaf: the Executor and Prepared
// interfaces every engine implements, the typed names of the built-in
// ones, the errors they share, the case a call serves (WithCase), and the
// optional capabilities an engine may offer (capability.go).
//
// Engines (packages oracle, fallback, native, isolate, external) implement
// it; package executor/builtin is the only place that knows them by name
// and builds them from one Config; the runner (harness) and the fuzzer
// consume them. Dependencies point that way only: no engine imports the
// runner.
package executor
