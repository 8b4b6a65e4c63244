// Package fuzz is rxeq's differential fuzzer: it generates random,
// well-typed .rx programs (Generate), runs them through several executors
// and compares the results the way the harness does (Checker.Check), and
// shrinks a program that disagrees to a small reproducer (Reduce,
// ReduceFinding).
//
// The pieces are meant to be composed by a driver (Campaign, the loop
// behind the `rxeq fuzz` command; the Go-native fuzz target
// FuzzDifferential):
//
//	c := &fuzz.Checker{}                           // oracle vs fallback
//	p := fuzz.Generate(seed, fuzz.Config{})
//	rep, err := c.Check(ctx, p.Source)
//	if err == nil && !rep.OK() {
//		r := fuzz.Reducer{MaxTime: time.Minute}
//		small, _, _ := r.ReduceFinding(ctx, p.Source, rep.Findings[0], c)
//		…save p.Source and small…
//	}
//
// A Campaign does that for consecutive seeds on several goroutines, with
// results taken in seed order, and saves each distinct finding in a
// directory of its own, DIR/<id>/, with seed-N.rx, seed-N.reduced.rx and
// finding.json (a Record: the category from a fixed vocabulary, the
// value and shape classes, the ops, the dedup key), merging and counting
// findings with the same key; a finding that an entry of the
// known-discrepancy ledger (package ledger) matches is recorded as xfail
// with category semantics:
//
//	c := fuzz.Campaign{Seed: 1, Count: 1000, Checker: &fuzz.Checker{}, Dir: "findings", Parallel: 4, Found: os.Stdout}
//	st, err := c.Run(ctx)
//
// Executors are executor.Executor values, so the native backend, a
// crash-isolating wrapper or a deliberately perturbed test executor plug in
// through Checker.Executors without changes here. An executor that is also
// a Prebuilder (the isolated native backend with an isolate.Pool) can be
// handed a batch of programs ahead of their checks (Checker.Prebuild), so
// that one compiler run builds them all; nothing else depends on it. An
// executor that is an executor.Slotter gives each goroutine of a Campaign
// a slot of its own (Checker.Slot), and a Finding records whether its run
// crashed or timed out in its process (Finding.Crashed), which decides
// whether its reduction shares a worker (ReduceChecker).
//
// # Generated programs
//
// Every program passes program.Parse by construction: expressions are
// generated against a target type (dtype and shape) from the variables in
// scope, so shapes always line up exactly (broadcasting only stretches
// size-1 dimensions or adds leading ones; a symbolic dimension never meets
// a constant one). Value ranges are kept where float32 stays meaningful:
// each variable carries an upper bound on its magnitude, and an expression
// whose bound would exceed a cap is squashed (Tanh, a clamp with
// Minimum/Maximum, or a power-of-two scale); Exp only sees bounded
// arguments, Log and Sqrt only positive ones (Abs(x)+1), divisions only
// denominators ≥ 1. A variable carried around a loop keeps the bound it
// had when the loop started, so nothing grows with the trip count.
//
// Each program draws a random subset of the language's features (swarm
// testing): a program without Softmax exercises the other ops harder.
//
// Programs write into buffers that already hold a value, as real code
// does (FeatReassign, FeatEarlyResults): a variable overwritten with
// another variable's value (v = w, a parameter's included), updated from
// itself elementwise (v = Tanh(v), v = Maximum(v, w)) or through a
// reduction kept to its shape (v = (v - Mean(v, a, true)) * 0.5), in
// loops too, and a result that starts as a parameter (out = p) and is
// updated later, so an executor that reuses a destination buffer, or lets
// an output share an input's, is checked. A loop may count to an int64
// local declared just before it (FeatForLocal: n := k + 2, n := 3, n :=
// CheckedRem(e, 4)) that its body assigns (n = n - 1, n = n + 1, n = i,
// ...): Go reads the count once, before the first trip, so an executor
// that re-reads it on every trip runs another number of trips.
//
// An edge-seeking program (Config.Edges, FeatEdges, one drawn program in
// 8) aims at the places frameworks differ instead: signed zeros meeting
// in Maximum, Minimum, Max and Relu and made observable by a division,
// NaN and ±Inf at every position of a row, rows that are all −Inf, Exp
// and Sigmoid near overflow, the transcendentals' other tails (Exp's
// subnormal results and Sigmoid below -88.7, uniform(-104, -86); Sigmoid
// where 1 - tanh cancels, uniform(-45, -30); Tanh through its saturation,
// uniform(-10, 10); Log and Sqrt of subnormals, uniform(0, 4e-38)), Log
// of a Sigmoid or an Exp (a subnormal flushed to 0 becomes -Inf there,
// which no tolerance absorbs), Log and Sqrt at and below zero, sizes from
// 1 to 40, Transpose feeding MatMul (see gen_expr.go's edge).
//
// # Invariance
//
// With Checker.Invariance (on in `rxeq fuzz`), every executor, the
// reference included, is also checked against itself on row-independent
// functions (harness.RowIndependence, harness.CheckInvariance): a row
// computed alone, with the rows reversed or shifted must give bit-identical
// results; a violation is a finding of KindPosition.
//
// # Round trip
//
// With Checker.RoundTrip (ONNXTrip, on in `rxeq fuzz` unless
// --roundtrip=false), every function is also exported to ONNX
// (onnx.Export), the model imported back into a program (onnx.Import),
// and the imported program run under the oracle on the function's inputs
// at every batch: its outputs must hold the oracle's bits for the
// function itself (NaN payloads aside), its errors the same kind,
// builtin and operands. A difference, or a failure of the export or the
// import, is a finding of executor RoundTripName, category CatRoundTrip,
// reduced with the round trip alone (Checker.ReferenceOnly) and saved
// with a repro.sh (RoundTripRepro). The forms the import refuses by
// design (an int64 tensor parameter, a second symbolic dimension) are
// not round-tripped.
//
// # Comparison
//
// The reference (the oracle) and every other executor run each function at
// each batch on the same inputs (harness.GenerateInputs: the //rx:input
// distributions seeded from the //rx:seed and the case name). Float outputs
// are compared with |got − want| ≤ atol + rtol·|want| (DefaultTolerance:
// the harness's catalog default, rtol 1e-4, atol 3e-6; //rx:tolerance
// directives still win), NaN positions and Inf signs must
// match, int64 outputs match exactly except argmax near-ties of a float
// result's scores, and errors must have the same kind and text.
//
// Bounded magnitudes do not bound rounding error: a loop can feed a
// chaotic map or a sum broadcast back into itself, and float32 can round
// log(1 + 1e-8) to 0 or a product of tiny values to 0 just before an
// infinity. So the checker measures, rather than guesses, what float32
// rounding can do to an output that disagrees: it runs the function again
// through the oracle, exactly and with every intermediate value rounded
// to float32 (once to nearest, then stochastically: Monte Carlo
// arithmetic, oracle.Options), and excuses an element when both the
// reference's and the executor's values are plausible results of those
// runs (a NaN/Inf they produced, or a value within their range stretched
// by the tolerance plus NoiseFactor times its width). Where the
// computation is well-conditioned the runs agree to a few ulps and the
// plain tolerance applies, so a wrong kernel is still caught (the
// perturbed-Tanh test in cmd/rxeq proves it). Report.Excused counts the
// elements the noise excused.
package fuzz
