package compare

// The float32 tolerance of an output without an //rx:tolerance directive:
// |got − want| ≤ DefaultATol + DefaultRTol·|want| against the oracle's
// float64 value.
//
// Set from measured error, not hope. Over the built-in catalog (every
// function except edge_large, whose probabilities carry their own
// //rx:tolerance), at batches 1, 16, 128 and 1024 with five seeds each,
// fallback and native against the oracle:
//
//   - greatest absolute difference: 8.1e-07 (score_pipeline logits);
//     probabilities at most 1.55e-07;
//   - greatest relative difference where |want| > 1e-3: 1.67e-04
//     (score_mlp logits, a value near cancellation);
//   - the ATol needed with RTol = 1e-4: 2.19e-07 (score_mlp logits,
//     native); with RTol = 1e-5: 3.13e-07.
//
// RTol = 1e-4 (about 840 float32 ULPs) with ATol = 3e-6 leaves a margin of
// 13x over the worst measured case. A tighter RTol would not help:
// elements near zero are covered by ATol either way.
const (
	DefaultRTol = 1e-4
	DefaultATol = 3e-6
)

// DefaultTolerance returns the default float32 tolerance.
func DefaultTolerance() Tolerance { return Tolerance{RTol: DefaultRTol, ATol: DefaultATol} }
