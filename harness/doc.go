// Package harness runs rxeq's differential tests: every scenario ×
// function × batch × executor, with every executor's full outputs judged
// against a reference, and the generated C of each function checked
// against its source lock. The rxeq command, package rxginkgo and the
// fuzzer are built on it. The user documentation is in docs/ (comparison.md
// for the rules below, lock.md for the source lock).
//
// # Executors
//
// The runner consumes executors and knows none of them by name: the
// interfaces (executor.Executor, executor.Prepared) live in package
// executor, the engines below it (oracle, fallback, native, isolate,
// external), and executor/builtin builds them from one Config (Select).
// Options.Executors, when nil, is builtin.Select's default set under
// builtin.Config{}.FromEnv (fallback, forced native and, with libtorch,
// torch; the ones this machine cannot run are in Result.Unavailable).
// What the runner needs beyond Prepare and Run it asks with type
// assertions on the optional capabilities of package executor: the
// memory profile (EstimateMemory), a reference that can round to float32
// (the blame), build info of compiled code (Preparation).
//
// # Running
//
// Run(ctx, files, Options) runs the matrix and returns a *Result: every
// Case in matrix order (scenario, function, batch, then the reference
// followed by the other executors), a LockCase per function with lock
// lines, and a Preparation per program and executor. The zero Options run
// the oracle as the reference against the fallback, the forced native
// backend and (with libtorch) torch, at each scenario's //rx:batches and
// //rx:seed, NumCPU groups at a time. Options can choose the executors (Executors, Reference, the
// reported Backends), override batches and seed, bind extra symbolic
// dimensions (Dims), select a Shard, bound each case (CaseTimeout) and the
// memory of each group (MaxMemory), set the default Tolerance, skip the
// locks, and
// receive progress and the tensors of each group (for --dump).
//
// For each group (scenario, function, batch) EstimateMemory first bounds
// what it needs through every executor; a group over the budget
// (DefaultMaxMemory unless set) is not run, and its cases are errors
// wrapping ErrMemory. GenerateInputs then makes the inputs once, from the file's //rx:input distributions, seeded by
// tensor.DeriveSeed(seed, InputSeedName(…)), with the batch bound to
// BatchSymbol's dimension; with Options.Inputs, parameters are read from
// .npy files instead (InputSearchPaths), the batch comes from the data,
// every file is checked before any case runs (ErrInputs), and
// Result.Replays says which inputs came from where. Each executor gets
// its own copy; the SHA-256 of
// every input (Digest) is taken before and after each run, and a changed
// input fails the case. The reference runs first; each program is prepared
// once per executor. Groups run in parallel; a failing case never stops
// the others, and a Run that outlives the case timeout is abandoned.
//
// # Statuses
//
// A Case is StatusPass (it agrees with the reference and left its inputs
// alone), StatusFail (an output out of tolerance, a class flip, a different
// or unexpected error, a missing or extra output, a modified input, an
// //rx:expect-error not met) or StatusError (it could not be judged: it
// was over the memory budget, inputs could not be generated, the executor could not prepare the program, the
// run timed out or was cancelled, or the reference failed without an
// //rx:expect-error), or StatusSkip (an external executor does not serve
// the function; neither a pass nor a failure). Case.Message explains a
// fail, an error or a skip in full. Result.OK is true when every case
// passed or was skipped and every lock held.
//
// # Judgement and locks
//
// The comparison rules live in package compare and the source lock in
// package lock; the runner applies them to every case (compare.ToOracle, the
// near-tie rule of compare.ClassesOwn, compare.Errors) and checks every function's //rx:lock lines against
// native.Generate's C (no compiler needed) unless Options.SkipLocks. When
// a case fails on its outputs, the oracle runs once more rounding every
// op to float32, and Case.Blame says whether float32 itself explains the
// mismatch (BlameFloat32, as for an Exp that overflows) or the executor
// does (BlameExecutor); the status stays StatusFail either way.
package harness
