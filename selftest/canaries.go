package selftest

import (
	"context"
	"errors"
	"math"
	"strings"

	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// setF32 sets element i of output name to v.
func setF32(name string, i int, v float32) func(map[string]*tensor.Tensor) {
	return func(got map[string]*tensor.Tensor) { got[name].F32[i] = v }
}

// stepF32 moves element i of output name n float32 steps up.
func stepF32(name string, i, n int) func(map[string]*tensor.Tensor) {
	return func(got map[string]*tensor.Tensor) {
		for range n {
			got[name].F32[i] = math.Nextafter32(got[name].F32[i], float32(math.Inf(1)))
		}
	}
}

// scoreRows returns the class canaries' scores, one row per rule: a clear
// winner; a near-tie of classes 0 and 1 (5e-5 apart, the tolerance at 1
// being 1.03e-4) with class 2 just outside it; an infinite best score;
// a NaN (Argmax picks it); an exact tie of classes 0 and 1.
func scoreRows() [][]float32 {
	return [][]float32{
		{0.9, 0.1, 0.2, 0.3},
		{1, 1 - 5e-5, 1 - 5e-3, 0},
		{float32(math.Inf(1)), 5, 3, 1},
		{1, float32(math.NaN()), 1, 1},
		{0.5, 0.5, 0, 0},
	}
}

func classScores() map[string]*tensor.Tensor {
	var v []float32
	rows := scoreRows()
	for _, r := range rows {
		v = append(v, r...)
	}
	return map[string]*tensor.Tensor{"s": tensor.FromFloat32(v, len(rows), 4)}
}

// classCanary sets the class of one row of function fn of
// canaries/classes.rx.
func classCanary(fn string, row int, class int64) outputCanary {
	return outputCanary{file: "classes.rx", fn: fn, set: classScores(), output: "classes",
		edit: func(got map[string]*tensor.Tensor) { got["classes"].I64[row] = class }}
}

// canaryCase is one kind of canary: run judges it through the Judgement;
// a case that `rxeq run`'s runner can judge too also has a method
// runner() returning how (nil when its inputs are given by hand).
type canaryCase interface {
	run(ctx context.Context, e *canaryEnv) (bool, string, error)
}

func canary(rule, name, what string, cc canaryCase) Canary {
	c := Canary{Rule: rule, Name: name, What: what, run: cc.run}
	if m, ok := cc.(maxULPCanary); ok {
		// run is the runner's judgement already.
		c.byRunner = true
		m.name = name
		c.run, c.runner = m.run, m.runner()
		return c
	}
	if r, ok := cc.(interface{ runner() *runnerCase }); ok {
		c.runner = r.runner()
	}
	return c
}

// Canaries returns the built-in canaries, at least one per rule of
// Rules(), in the registry's order.
func Canaries() []Canary {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	values := func(output string, edit func(map[string]*tensor.Tensor)) outputCanary {
		return outputCanary{file: "values.rx", fn: "values", output: output, edit: edit}
	}
	signed := func(output string, edit func(map[string]*tensor.Tensor)) outputCanary {
		return outputCanary{file: "signed_zeros.rx", fn: "values", output: output, edit: edit}
	}
	tols := func(output string, edit func(map[string]*tensor.Tensor)) outputCanary {
		return outputCanary{file: "tolerances.rx", fn: "tols", output: output, edit: edit}
	}
	divByOne := map[string]*tensor.Tensor{"d": tensor.FromInt64([]int64{1})}
	rewrap := func(want error, kind error, detail func(string) string) error {
		var re *ir.RuntimeError
		if !errors.As(want, &re) {
			return errors.New("no runtime error to rewrap")
		}
		return &ir.RuntimeError{Kind: kind, Func: re.Func, Detail: detail(re.Detail)}
	}
	same := func(s string) string { return s }
	return []Canary{
		canary("nan-stray", "nan-for-1.5", "fin[0,0] = NaN where the oracle has 1.5", values("fin", setF32("fin", 0, nan))),
		canary("nan-missing", "1.5-for-nan", "nan[0,0] = 1.5 where the oracle has NaN (Sqrt(-1.5))", values("nan", setF32("nan", 0, 1.5))),
		canary("inf-plus-vs-minus", "minus-inf-for-plus", "pinf[0,0] = -Inf where the oracle has +Inf (Exp(1500))", values("pinf", setF32("pinf", 0, -inf))),
		canary("inf-minus-vs-plus", "plus-inf-for-minus", "ninf[1,3] = +Inf where the oracle has -Inf", values("ninf", setF32("ninf", 7, inf))),
		canary("inf-vs-finite", "maxfloat-for-inf", "pinf[0,1] = MaxFloat32 where the oracle has +Inf", values("pinf", setF32("pinf", 1, math.MaxFloat32))),
		canary("finite-vs-inf", "inf-for-1.5", "fin[1,2] = +Inf where the oracle has 1.5", values("fin", setF32("fin", 6, inf))),
		canary("beyond-float32", "maxfloat-for-1.2e39", "big[0,0] = MaxFloat32 where the oracle has Exp(90) ≈ 1.2e39, +Inf in float32", values("big", setF32("big", 0, math.MaxFloat32))),
		canary("signed-zero", "minus-zero-for-plus", "zero[0,0] = -0 where the oracle has +0, with //rx:signed-zeros", signed("zero", setF32("zero", 0, float32(math.Copysign(0, -1))))),
		canary("signed-zero", "plus-zero-for-minus", "nzero[1,1] = +0 where the oracle has -0, with //rx:signed-zeros", signed("nzero", setF32("nzero", 5, 0))),
		canary("tolerance-default", "two-tolerances-off", "fin[0,0] = 1.5 + 2·(3e-6 + 1e-4·1.5) under the default tolerance", values("fin", setF32("fin", 0, 1.5+2*(3e-6+1e-4*1.5)))),
		canary("tolerance-atol", "atol-only", "a_only[0,0] = 1500.005 where atol=1e-3 (the default rtol would allow 0.15)", tols("a_only", setF32("a_only", 0, 1500.005))),
		canary("tolerance-rtol", "rtol-only", "r_only[0,0] = 1.5e-6·(1 + 5e-6) where rtol=1e-6 (the default atol would allow 3e-6)", tols("r_only", setF32("r_only", 0, float32(1.5e-6*(1+5e-6))))),
		canary("tolerance-ulp", "two-ulp-for-ulp-1", "ulp_only[0,0] two float32 steps above 1.5 where ulp=1: within 2 spacings in value, 2 ULPs apart", tols("ulp_only", stepF32("ulp_only", 0, 2))),
		canary("tolerance-ulp-and-rel", "three-ulp-for-ulp-2", "ulp_rel[0,0] three float32 steps above 1.5 where rtol=1e-2 atol=1e-2 ulp=2", tols("ulp_rel", stepF32("ulp_rel", 0, 3))),
		canary("max-ulp", "two-ulp-under-max-ulp-1", "fin[0,0] two float32 steps above 1.5 (inside the default tolerance) under rxeq run --max-ulp 1",
			maxULPCanary{outputCanary: values("fin", stepF32("fin", 0, 2)), maxULP: 1}),
		canary("int64-exact", "index-plus-one", "counts' idx[0] (Argmax of a parameter, not a class output) one more than the oracle's",
			outputCanary{file: "values.rx", fn: "counts", set: map[string]*tensor.Tensor{"x": tensor.FromFloat32([]float32{0, 1, 2, 3, 3, 2, 1, 0}, 2, 4)}, output: "idx",
				edit: func(got map[string]*tensor.Tensor) { got["idx"].I64[0]-- }}),
		canary("class-flip", "clear-winner-flipped", "row 0 (scores 0.9 0.1 0.2 0.3) given class 1", classCanary("late", 0, 1)),
		canary("near-tie-finite", "outside-the-tie", "row 1 (classes 0 and 1 tied within 5e-5, class 2 5e-3 below) given class 2", classCanary("late", 1, 2)),
		canary("near-tie-inf", "finite-for-inf-best", "row 2 (scores +Inf 5 3 1) given class 1", classCanary("late", 2, 1)),
		canary("near-tie-nan", "nan-row-tied-value", "row 3 (scores 1 NaN 1 1, Argmax 1) given class 0, equal to the best finite score", classCanary("late", 3, 0)),
		canary("class-own-argmax", "exact-tie-broken-late", "row 4 (scores 0.5 0.5 0 0 in the oracle and the executor) given class 1, not its own first argmax", classCanary("classes", 4, 1)),
		canary("output-shape", "dims-reversed", "fin [2 4] returned as [4 2], the same data",
			values("fin", func(got map[string]*tensor.Tensor) { got["fin"].Shape = []int{4, 2} })),
		canary("output-dtype", "classes-as-float32", "counts' idx returned as float32",
			outputCanary{file: "values.rx", fn: "counts", output: "idx", edit: func(got map[string]*tensor.Tensor) {
				got["idx"] = tensor.FromFloat32(make([]float32, got["idx"].Len()), got["idx"].Shape...)
			}}),
		canary("output-missing", "fin-left-out", "fin not returned", values("fin", func(got map[string]*tensor.Tensor) { delete(got, "fin") })),
		canary("output-undeclared", "extra-output", "an output extra, not declared by values, returned too",
			outputCanary{file: "values.rx", fn: "values", undeclared: true, edit: func(got map[string]*tensor.Tensor) { got["extra"] = got["fin"].Clone() }}),
		canary("error-kind", "overflow-for-division", "the oracle's division-by-zero error with its text but the kind integer overflow",
			errorCanary{fail: true, mk: func(w error) error { return rewrap(w, ir.ErrOverflow, same) }}),
		canary("error-text", "reworded", "the oracle's division-by-zero error reworded (divide for division)",
			errorCanary{fail: true, mk: func(w error) error {
				return rewrap(w, ir.ErrDivisionByZero, func(s string) string { return strings.Replace(s, "division", "divide", 1) })
			}}),
		canary("error-missing", "success-for-failure", "success where the oracle fails with division by zero",
			errorCanary{fail: true, mk: func(error) error { return nil }}),
		canary("error-spurious", "failure-for-success", "a division-by-zero error where the oracle succeeds",
			errorCanary{set: divByOne, mk: func(error) error {
				return &ir.RuntimeError{Kind: ir.ErrDivisionByZero, Func: "rem", Detail: "CheckedRem: division by zero (i=0)"}
			}}),
		canary("blame-rounded-misses", "one-step-above-rounded", "tenth's y one float32 step above float32(0.1): within atol=7.5e-9 of the rounded reference, which itself is within it of 0.1",
			blameCanary{outputCanary{file: "blame.rx", fn: "tenth", output: "y", edit: stepF32("y", 0, 1)}}),
		canary("blame-agrees-rounded", "finite-for-overflow", "overflow's v = MaxFloat32 where the oracle has Exp(89)/2 ≈ 2.2e38 and the rounded reference +Inf",
			blameCanary{outputCanary{file: "blame.rx", fn: "overflow", output: "v", edit: setF32("v", 0, math.MaxFloat32)}}),
		canary("blame-class", "flip-not-rounding", "late's row 0 (scores 0.9 0.1 0.2 0.3, which float32 rounding does not reorder) given class 1",
			blameCanary{classCanary("late", 0, 1)}),
		canary("invariance-batch", "one-ulp-alone", "values' fin[0,0] one float32 step higher when its row runs alone (batch 1)",
			invarianceCanary{stepF32("fin", 0, 1)}),
		canary("invariance-bits", "minus-zero-alone", "values' zero[0,0] -0 instead of +0 when its row runs alone (batch 1)",
			invarianceCanary{setF32("zero", 0, float32(math.Copysign(0, -1)))}),
		canary("lock-scope", "decoy", "decoy locks the loop only looper has", lockCanary{"decoy"}),
		canary("lock-literal", "wrong-count", "wrong_count locks i < 4 where its loop runs to 3", lockCanary{"wrong_count"}),
		canary("lock-not", "forbidden-loop", "forbidden's lock-not \"for (\" in a function with a loop", lockCanary{"forbidden"}),
		canary("lock-order", "reversed", "reversed locks its second loop before its first", lockCanary{"reversed"}),
		canary("external-crc-missing", "nocrc", Misbehaviours()["nocrc"], externalCanary{"nocrc", []string{"has no input_crc32 for input"}}),
		canary("external-crc-wrong", "wrongcrc", Misbehaviours()["wrongcrc"], externalCanary{"wrongcrc", []string{"rxeq rejected the executor's answer", "modified input"}}),
		canary("external-input-mutated", "mutate", Misbehaviours()["mutate"], externalCanary{"mutate", []string{"rxeq rejected the executor's answer", "modified input"}}),
		canary("external-dims", "dims", Misbehaviours()["dims"], externalCanary{"dims", []string{"rxeq rejected the executor's answer", "returned wrong outputs"}}),
		canary("external-dtype", "dtype", Misbehaviours()["dtype"], externalCanary{"dtype", []string{"rxeq rejected the executor's answer", "is float64"}}),
		canary("external-protocol", "wrong-id", Misbehaviours()["protocol"], externalCanary{"protocol", []string{"protocol"}}),
	}
}
