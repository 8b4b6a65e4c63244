package fuzz_test

import (
	"context"
	"testing"
	"time"

	"github.com/rextio/rxeq/fuzz"
)

// FuzzDifferential drives the generator from the fuzzer's bytes (the seed
// from the first 8, the knobs from the rest: fuzz.ConfigFromBytes) and
// fails when the oracle and the fallback interpreter disagree on the
// generated program beyond what float32 rounding noise explains (the
// Checker's default noise runs), printing the program and its reduced
// form.
// testdata/fuzz/FuzzDifferential holds the regression corpus that plain
// `go test` replays. Run it with
//
//	go test ./fuzz -run '^$' -fuzz FuzzDifferential -fuzztime 2m
func FuzzDifferential(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{42, 0, 0, 0, 0, 0, 0, 0, 3, 11, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		seed, cfg := fuzz.ConfigFromBytes(data)
		p := fuzz.Generate(seed, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c := &fuzz.Checker{}
		rep, err := c.Check(ctx, p.Source)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, p.Source)
		}
		if rep.OK() {
			return
		}
		small, _, _ := fuzz.ReduceFinding(ctx, p.Source, rep.Findings[0], c)
		t.Fatalf("seed %d: %s\n--- program:\n%s\n--- reduced:\n%s", seed, rep.Findings[0], p.Source, small)
	})
}
