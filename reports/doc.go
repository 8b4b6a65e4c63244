// Package reports holds rxeq's run report as plain data and writes it out:
// versioned JSON ("rxeq.report/v1"), JUnit XML for CI viewers, and NumPy
// .npy dumps of a case's inputs and outputs.
//
// The types here carry no behaviour of the harness: the harness fills a
// Report and this package only encodes it, so reports imports nothing
// from rxeq but tensor.
package reports
