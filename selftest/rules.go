package selftest

// Rule is one rule of rxeq's judgement: something the comparison, the
// blame, the source lock or the external-executor checks must flag. Every
// rule has at least one canary (Canaries), a case the rule must flag;
// RunCanaries refuses a registry with a rule that has none.
type Rule struct {
	// ID is stable: reports, docs and failures name the rule by it.
	ID string
	// What the rule says, in one line.
	What string
}

// Rules returns the registry of the judgement's rules, in the order
// `rxeq selftest` lists them (docs/comparison.md states each).
func Rules() []Rule {
	return []Rule{
		{"nan-stray", "a NaN where the oracle has a number is a mismatch"},
		{"nan-missing", "a number where the oracle has NaN is a mismatch"},
		{"inf-plus-vs-minus", "-Inf where the oracle has +Inf is a mismatch"},
		{"inf-minus-vs-plus", "+Inf where the oracle has -Inf is a mismatch"},
		{"inf-vs-finite", "a finite value where the oracle has an infinity is a mismatch, whatever the tolerance"},
		{"finite-vs-inf", "an infinity where the oracle has a finite value is a mismatch"},
		{"beyond-float32", "an oracle value beyond the float32 range is compared as the infinity it rounds to"},
		{"signed-zero", "with //rx:signed-zeros, a zero of the other sign is a mismatch (each sign)"},
		{"tolerance-default", "without //rx:tolerance, an element beyond rtol=1e-4 atol=3e-6 is a mismatch"},
		{"tolerance-atol", "//rx:tolerance OUT atol=A holds the output to A alone (rtol is 0, not the default)"},
		{"tolerance-rtol", "//rx:tolerance OUT rtol=R holds the output to R·|want| alone (atol is 0, not the default)"},
		{"tolerance-ulp", "//rx:tolerance OUT ulp=N holds the output to N float32 ULPs of the rounded oracle value, not a bound in value"},
		{"tolerance-ulp-and-rel", "//rx:tolerance OUT rtol=… atol=… ulp=N applies the ULP bound on top of rtol and atol"},
		{"max-ulp", "rxeq run --max-ulp N holds every float output without its own ulp= to N ULPs, on top of its tolerance"},
		{"int64-exact", "an int64 output that is not a class output matches exactly"},
		{"class-flip", "a class that is neither the oracle's nor tied with it is a mismatch"},
		{"near-tie-finite", "with a finite best score, only classes within the scores' tolerance of it are tied"},
		{"near-tie-inf", "an infinite best score ties only with an equal infinity: no finite class is accepted"},
		{"near-tie-nan", "a row of scores holding a NaN is never a near-tie: its class must match exactly"},
		{"class-own-argmax", "a class must be the first argmax of the executor's own final scores, whatever the oracle ties"},
		{"output-shape", "an output of another shape is a problem, not compared element by element"},
		{"output-dtype", "an output of another dtype (a float where int64 is declared) is a problem"},
		{"output-missing", "a declared output the executor did not return is a problem"},
		{"output-undeclared", "an output the function does not declare is a failure"},
		{"error-kind", "where the oracle fails, an error of another kind is a mismatch"},
		{"error-text", "where the oracle fails, the same kind with another message is a mismatch"},
		{"error-missing", "where the oracle fails, an executor that succeeds is a mismatch"},
		{"error-spurious", "where the oracle succeeds, an executor that fails is a mismatch"},
		{"blame-rounded-misses", "float32-limit only where the float32-rounded reference misses the exact one too"},
		{"blame-agrees-rounded", "float32-limit only where the executor agrees with the float32-rounded reference"},
		{"blame-class", "float32-limit for a class output only where the float32-rounded reference picks the executor's class"},
		{"invariance-batch", "a row-independent result computed alone (batch 1) must equal the same row in its batch, bit for bit"},
		{"invariance-bits", "invariance is bit-identity: a zero of the other sign alone than in its batch is a violation"},
		{"lock-scope", "a lock is checked in its own function's C only: a match in another function (a decoy) fails it"},
		{"lock-literal", "a lock text the function's C does not contain fails"},
		{"lock-not", "a lock-not pattern the function's C contains fails"},
		{"lock-order", "lock checks match in order: two loops locked in the wrong order fail"},
		{"external-crc-missing", "an external executor's result without an input's CRC-32 is a protocol violation, never taken as unmodified"},
		{"external-crc-wrong", "an input CRC-32 other than the sent bytes' is a modified input"},
		{"external-input-mutated", "an external executor that writes into an input fails its case"},
		{"external-dims", "an external output with the right rank but the wrong dims is rejected against the checked shape"},
		{"external-dtype", "an external output of another dtype is rejected (rxeq never converts)"},
		{"external-protocol", "a protocol violation (an answer with another id) fails the case"},
	}
}
