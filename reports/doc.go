// Package reports turns a harness run into rxeq's reports and writes them:
// versioned JSON ("rxeq.report/v1"), JUnit XML for CI viewers, and NumPy
// .npy dumps of each group's inputs and outputs with a manifest. The
// formats are documented for users in docs/reports.md.
//
// A Report is plain data: the run (tool version, compiler, seed, wall
// time), one Case per scenario × function × batch × executor with its
// Output comparisons, and one Lock per function with lock lines, each with
// its LockCheck results. FromResult builds it from a *harness.Result and a
// RunInfo (the tool version and the --seed override); it is the only part
// of the package that knows the harness, and code that produces a Report
// some other way can use the writers alone.
//
// WriteJSON encodes a Report as indented JSON with Schema in its "schema"
// field, writing non-finite numbers (Number) as the strings "NaN", "+Inf"
// and "-Inf"; ReadJSON reads it back and refuses any other schema
// (ErrSchema). WriteJUnit writes one <testsuite> per scenario and one
// <testcase> per case and per lock, valid against the Jenkins xUnit schema
// in testdata/junit-10.xsd. WriteDump writes each group's tensors as NumPy
// .npy files (package tensor/npy: C order, little-endian float32, float64
// or int64) in a directory with a manifest.json (DumpSchema,
// "rxeq.dump/v1").
//
// Merge joins the reports of the shards of one run in memory; PlanMerge
// and MergePlan.Write do it in two streamed passes over the shards'
// files, holding one case at a time (rxeq merge).
package reports
