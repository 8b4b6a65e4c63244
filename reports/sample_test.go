package reports_test

import (
	"math"

	"github.com/rextio/rxeq/reports"
)

// sampleReport is a small run: two scenarios, a passing, a failing, an
// erroring and a skipped case, a passing and a failing lock.
func sampleReport() *reports.Report {
	tol := &reports.Tolerance{RTol: 1e-5, ATol: 1e-6}
	return &reports.Report{
		Schema:      reports.Schema,
		ToolVersion: "v0.1.0",
		Compiler:    "cc (Debian 12.2.0-14) 12.2.0",
		Seed:        42,
		Duration:    1.5,
		Cases: []reports.Case{
			{Scenario: "reference", Function: "score_linear", Batch: 16, Executor: "native", Path: "native", Seed: 7,
				Status: reports.StatusPass, Duration: 0.125,
				Outputs: []reports.Output{{Name: "probs", Against: "oracle", Tolerance: tol, OK: true, Total: 128,
					MaxAbs: 3.5e-8, MaxRel: 1e-7, MaxULP: 3, MaxAbsIndex: []int{2, 5}, MaxRelIndex: []int{2, 5},
					NearTies: []reports.NearTie{}, Report: "probs: 0 / 128 mismatched"}}},
			{Scenario: "reference", Function: "score_linear", Batch: 16, Executor: "fallback", Path: "fallback", Seed: 7,
				Status: reports.StatusFail, Duration: 1e-7,
				Outputs: []reports.Output{
					{Name: "probs", Against: "oracle", Tolerance: tol, Total: 128, Mismatches: 1,
						MaxAbs: 4.1e-05, MaxRel: Number(math.Inf(1)), MaxULP: 1379, MaxAbsIndex: []int{12, 3}, WorstIndex: []int{12, 3},
						Report: "probs: 1 / 128 mismatched (0.8%); greatest abs diff 4.1e-05 at [12 3] (allowed 1.0e-05) & <more>"},
					{Name: "classes", Against: "oracle", OK: true, Total: 16,
						NearTies: []reports.NearTie{{Index: []int{4}, Classes: []int64{1, 6}, Want: 1, Got: 6}}}}},
			{Scenario: "errors", Function: "rem_zero", Batch: 1, Executor: "native", Path: "native", Seed: 9,
				Status: reports.StatusError, Duration: 0.002, Error: "rem_zero: CheckedRem: division by zero (r=3) at e.rx:4:9",
				Message: "the oracle succeeded but the executor failed\nsecond line"},
			{Scenario: "errors", Function: "rem_zero", Batch: 128, Executor: "oracle", Path: "oracle", Seed: 10,
				Status: reports.StatusSkip, Message: "--batch 1"},
		},
		Locks: []reports.Lock{
			{Scenario: "reference", Function: "score_linear", CFunc: "rx_score_linear", Status: reports.StatusPass, Duration: 0.0005,
				Checks: []reports.LockCheck{{Kind: "lock", Text: "for (int64_t", Pos: "ref.rx:12:2", OK: true, Line: 31}}},
			{Scenario: "errors", Function: "rem_zero", CFunc: "rx_rem_zero", Status: reports.StatusFail,
				Checks:  []reports.LockCheck{{Kind: "lock-not", Regexp: true, Text: `rx_tanh\(`, Pos: "e.rx:5:2", Line: 20, Message: "appears"}},
				Message: "source lock failed in function rx_rem_zero: //rx:lock-not `rx_tanh\\(` (e.rx:5:2)\n>>   20 | rx_tanh(x);"},
		},
	}
}

// Number shortens reports.Number in the sample.
type Number = reports.Number
