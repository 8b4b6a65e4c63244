package compare_test

import (
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/tensor"
)

var (
	nan  = math.NaN()
	pinf = math.Inf(1)
	ninf = math.Inf(-1)
)

// f32 returns float32 copies of vals (the executor's side).
func f32(vals ...float64) []float32 {
	out := make([]float32, len(vals))
	for i, v := range vals {
		out[i] = float32(v)
	}
	return out
}

var _ = Describe("ToOracle", func() {
	tight := compare.Tolerance{RTol: 1e-5, ATol: 1e-6}

	It("passes values within atol + rtol·|want| and fails one just outside", func() {
		// want 1000: allowed = 1e-6 + 1e-5*1000 = 0.010001.
		want := tensor.FromFloat64([]float64{1000, 1000}, 2)
		got := tensor.FromFloat32([]float32{1000.0078125, 1000.015625}, 2) // 2^-7 and 2^-6 off
		m := compare.ToOracle("logits", want, got, tight)
		Expect(m.OK).To(BeFalse())
		Expect(m.Total).To(Equal(2))
		Expect(m.Mismatches).To(Equal(1))
		Expect(m.MaxAbsDiff).To(Equal(0.015625))
		Expect(m.MaxAbsIndex).To(Equal([]int{1}))
		Expect(m.MaxAbsAllowed).To(BeNumerically("~", 0.010001, 1e-15))
		Expect(m.MaxRelDiff).To(BeNumerically("~", 1.5625e-5, 1e-18))
		// float32 spacing in [512, 1024) is 2^-14, so 2^-6 is 256 ULPs.
		Expect(m.MaxULP).To(Equal(uint64(256)))
		Expect(m.WorstIndex).To(Equal([]int{1}))
	})

	It("pins the report for a single bad element at [12 3] of a [128 8] tensor", func() {
		want := tensor.NewFloat64(128, 8)
		for i := range want.F64 {
			want.F64[i] = 0.25
		}
		want.F64[12*8+3] = 0.4521
		got := tensor.FromFloat32(f32(want.F64...), 128, 8)
		got.F32[12*8+3] = 0.4521411
		m := compare.ToOracle("probs", want, got, compare.Tolerance{ATol: 1e-5})
		Expect(m.OK).To(BeFalse())
		Expect(m.Mismatches).To(Equal(1))
		Expect(m.Total).To(Equal(1024))
		Expect(m.MaxAbsIndex).To(Equal([]int{12, 3}))
		Expect(m.MaxRelIndex).To(Equal([]int{12, 3}))
		Expect(m.WorstIndex).To(Equal([]int{12, 3}))
		// float32(0.4521411) = 0.4521411061286926; minus 0.4521 = 4.1106e-05; / 0.4521 = 9.09e-05.
		Expect(m.MaxAbsDiff).To(BeNumerically("~", 4.110612869262509e-05, 1e-15))
		// bits(float32(0.4521411)) - bits(float32(0.4521)) = 1379.
		Expect(m.MaxULP).To(Equal(uint64(1379)))
		Expect(m.Report).To(Equal("probs: 1 / 1024 mismatched (0.1%); greatest abs diff 4.1e-05 at [12 3] (allowed 1.0e-05); " +
			"greatest rel diff 9.1e-05 at [12 3]; first mismatches: [12 3] want 0.4521 got 0.4521411"))
	})

	It("lists only the first five mismatches and says how many more", func() {
		want := tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6, 7}, 7)
		got := tensor.FromFloat32(f32(2, 3, 4, 5, 6, 7, 8), 7)
		m := compare.ToOracle("x", want, got, compare.Tolerance{})
		Expect(m.Mismatches).To(Equal(7))
		Expect(m.First).To(HaveLen(5))
		Expect(m.Report).To(HaveSuffix("[3] want 4 got 5, [4] want 5 got 6, … (2 more)"))
		Expect(m.Report).To(HavePrefix("x: 7 / 7 mismatched (100.0%); greatest abs diff 1.0e+00 at [0] (allowed 0.0e+00); greatest rel diff 1.0e+00 at [0];"))
	})

	It("reports a passing output with its differences and no mismatch list", func() {
		want := tensor.FromFloat64([]float64{0.5, 2}, 2)
		got := tensor.FromFloat32([]float32{0.5, 2}, 2)
		m := compare.ToOracle("probs", want, got, tight)
		Expect(m.OK).To(BeTrue())
		Expect(m.WorstIndex).To(BeNil())
		Expect(m.Report).To(Equal("probs: 0 / 2 mismatched; greatest abs diff 0.0e+00 at [0] (allowed 6.0e-06); greatest rel diff 0.0e+00 at [0]"))
	})

	Describe("NaN", func() {
		It("must be NaN at the same index", func() {
			want := tensor.FromFloat64([]float64{1, nan, 3, nan}, 4)
			got := tensor.FromFloat32(f32(1, 2, nan, nan), 4)
			m := compare.ToOracle("y", want, got, compare.Tolerance{RTol: 1, ATol: 1e30})
			Expect(m.OK).To(BeFalse())
			Expect(m.Mismatches).To(Equal(2))
			Expect(m.First[0].Index).To(Equal([]int{1}))
			Expect(m.First[1].Index).To(Equal([]int{2}))
			Expect(m.WorstIndex).To(Equal([]int{1}))
			Expect(m.Report).To(ContainSubstring("first mismatches: [1] want NaN got 2, [2] want 3 got NaN"))
			// Only index 0 has two finite values.
			Expect(m.MaxAbsIndex).To(Equal([]int{0}))
		})
		It("accepts NaN against NaN whatever the payload or sign", func() {
			want := tensor.FromFloat64([]float64{math.Float64frombits(0xfff8000000000001)}, 1)
			got := tensor.FromFloat32([]float32{math.Float32frombits(0x7fc00001)}, 1)
			m := compare.ToOracle("y", want, got, compare.Tolerance{})
			Expect(m.OK).To(BeTrue())
			Expect(m.MaxAbsIndex).To(BeNil())
			Expect(m.Report).To(Equal("y: 0 / 1 mismatched"))
		})
	})

	Describe("infinities", func() {
		It("rejects -Inf against +Inf whatever the tolerance", func() {
			want := tensor.FromFloat64([]float64{pinf, ninf, pinf}, 3)
			got := tensor.FromFloat32(f32(ninf, ninf, pinf), 3)
			m := compare.ToOracle("z", want, got, compare.Tolerance{RTol: 10, ATol: math.MaxFloat64})
			Expect(m.Mismatches).To(Equal(1))
			Expect(m.Report).To(ContainSubstring("[0] want +Inf got -Inf"))
		})
		It("rejects an infinity against the largest finite float32", func() {
			want := tensor.FromFloat64([]float64{pinf}, 1)
			got := tensor.FromFloat32([]float32{math.MaxFloat32}, 1)
			m := compare.ToOracle("z", want, got, compare.Tolerance{RTol: 1, ATol: 1})
			Expect(m.OK).To(BeFalse())
			Expect(m.MaxULP).To(Equal(uint64(1)))
		})
	})

	It("treats +0 and -0 as equal, even with zero tolerance", func() {
		want := tensor.FromFloat64([]float64{math.Copysign(0, -1), 0}, 2)
		got := tensor.FromFloat32([]float32{0, float32(math.Copysign(0, -1))}, 2)
		m := compare.ToOracle("z", want, got, compare.Tolerance{})
		Expect(m.OK).To(BeTrue())
		Expect(m.MaxULP).To(BeZero())
		// want is zero everywhere: the relative difference is not defined.
		Expect(m.MaxRelIndex).To(BeNil())
	})

	Describe("subnormals", func() {
		tiny := math.Ldexp(1, -149) // the smallest float32 subnormal
		It("compares them as ordinary numbers", func() {
			want := tensor.FromFloat64([]float64{3 * tiny}, 1)
			got := tensor.FromFloat32([]float32{float32(tiny)}, 1)
			m := compare.ToOracle("s", want, got, compare.Tolerance{})
			Expect(m.OK).To(BeFalse())
			Expect(m.MaxAbsDiff).To(Equal(2 * tiny))
			Expect(m.MaxULP).To(Equal(uint64(2)))
			m = compare.ToOracle("s", want, got, compare.Tolerance{ATol: 1e-44})
			Expect(m.OK).To(BeTrue())
		})
		It("counts one ULP between zero and the smallest subnormal, on both sides of zero", func() {
			want := tensor.FromFloat64([]float64{0, 0}, 2)
			got := tensor.FromFloat32([]float32{float32(tiny), float32(-tiny)}, 2)
			m := compare.ToOracle("s", want, got, compare.Tolerance{ATol: 1e-40})
			Expect(m.OK).To(BeTrue())
			Expect(m.MaxULP).To(Equal(uint64(1)))
		})
	})

	Describe("problems", func() {
		It("fails a shape mismatch with both shapes", func() {
			m := compare.ToOracle("probs", tensor.NewFloat64(128, 8), tensor.NewFloat32(8, 128), tight)
			Expect(m.OK).To(BeFalse())
			Expect(m.Problem).To(Equal("shape mismatch: want [128 8], got [8 128]"))
			Expect(m.Report).To(Equal("probs: shape mismatch: want [128 8], got [8 128]"))
		})
		It("fails a dtype mismatch", func() {
			m := compare.ToOracle("classes", tensor.NewInt64(4), tensor.NewFloat32(4), tight)
			Expect(m.Problem).To(Equal("dtype mismatch: want int64, got float32"))
		})
		It("fails a missing or malformed output", func() {
			Expect(compare.ToOracle("p", tensor.NewFloat64(2), nil, tight).Problem).To(Equal("the output is missing"))
			bad := &tensor.Tensor{DType: tensor.Float32, Shape: []int{3}, F32: []float32{1}}
			Expect(compare.ToOracle("p", tensor.NewFloat64(3), bad, tight).Problem).To(HavePrefix("malformed output tensor"))
		})
	})

	It("compares int64 outputs exactly, ignoring the tolerance", func() {
		want := tensor.FromInt64([]int64{1, 2, 3, 4}, 2, 2)
		got := tensor.FromInt64([]int64{1, 2, 4, 4}, 2, 2)
		m := compare.ToOracle("n", want, got, compare.Tolerance{RTol: 1, ATol: 10})
		Expect(m.OK).To(BeFalse())
		Expect(m.Report).To(Equal("n: 1 / 4 mismatched (25.0%); greatest abs diff 1 at [1 0]; greatest rel diff 3.3e-01 at [1 0]; first mismatches: [1 0] want 3 got 4"))
	})
})

var _ = Describe("Classes", func() {
	tol := compare.Tolerance{RTol: 1e-5, ATol: 1e-6}
	// Three rows of four scores: a clear winner, a near-tie, a clear winner.
	scores := func() *tensor.Tensor {
		return tensor.FromFloat64([]float64{
			0.1, 0.7, 0.2, 0.0,
			0.5, 0.5000001, 0.1, 0.0,
			0.1, 0.2, 0.9, 0.3,
		}, 3, 4)
	}

	It("accepts either class of a near-tie row and reports the row", func() {
		want := tensor.FromInt64([]int64{1, 1, 2}, 3)
		got := tensor.FromInt64([]int64{1, 0, 2}, 3)
		m := compare.Classes("classes", want, got, scores(), 1, tol)
		Expect(m.OK).To(BeTrue())
		Expect(m.NearTies).To(Equal([]compare.NearTie{{Index: []int{1}, Classes: []int64{0, 1}, Want: 1, Got: 0}}))
		Expect(m.Report).To(Equal("classes: 0 / 3 mismatched; 1 near-tie row: [1] classes {0 1} want 1 got 0"))
	})

	It("rejects a clear class flip and shows the oracle scores", func() {
		want := tensor.FromInt64([]int64{1, 1, 2}, 3)
		got := tensor.FromInt64([]int64{1, 1, 3}, 3)
		m := compare.Classes("classes", want, got, scores(), 1, tol)
		Expect(m.OK).To(BeFalse())
		Expect(m.Mismatches).To(Equal(1))
		Expect(m.WorstIndex).To(Equal([]int{2}))
		Expect(m.Report).To(Equal("classes: 1 / 3 mismatched (33.3%); first mismatches: [2] want 2 got 3 (oracle scores 0.9, 0.3); " +
			"1 near-tie row: [1] classes {0 1} want 1 got 1"))
	})

	It("does not accept a third class in a near-tie row", func() {
		want := tensor.FromInt64([]int64{1, 1, 2}, 3)
		got := tensor.FromInt64([]int64{1, 2, 2}, 3)
		Expect(compare.Classes("c", want, got, scores(), 1, tol).Mismatches).To(Equal(1))
	})

	It("uses no near-tie rule for a row holding NaN", func() {
		s := tensor.FromFloat64([]float64{nan, 1, 1}, 1, 3)
		m := compare.Classes("c", tensor.FromInt64([]int64{0}, 1), tensor.FromInt64([]int64{1}, 1), s, -1, tol)
		Expect(m.Mismatches).To(Equal(1))
		Expect(m.NearTies).To(BeEmpty())
	})

	It("reduces along any axis and accepts keepdims classes", func() {
		// The same rows, transposed: classes along axis 0.
		s := scores()
		t := tensor.NewFloat64(4, 3)
		for r := 0; r < 3; r++ {
			for c := 0; c < 4; c++ {
				t.F64[c*3+r] = s.F64[r*4+c]
			}
		}
		want := tensor.FromInt64([]int64{1, 1, 2}, 1, 3)
		got := tensor.FromInt64([]int64{1, 0, 3}, 1, 3)
		m := compare.Classes("c", want, got, t, 0, tol)
		Expect(m.Problem).To(BeEmpty())
		Expect(m.Mismatches).To(Equal(1))
		Expect(m.First[0].Index).To(Equal([]int{0, 2}))
		Expect(m.NearTies).To(HaveLen(1))
	})

	It("reports shapes that do not line up", func() {
		m := compare.Classes("c", tensor.NewInt64(4), tensor.NewInt64(4), scores(), 1, tol)
		Expect(m.Problem).To(Equal("shape mismatch: classes [4] do not fit scores [3 4] reduced along axis 1"))
	})
})

// Issue 15 item 2: exact ties are exact.
var _ = Describe("ClassesOwn", func() {
	tol := compare.Tolerance{RTol: 1e-5, ATol: 1e-6}
	oracle := func() *tensor.Tensor {
		return tensor.FromFloat64([]float64{
			0.1, 0.7, 0.2,
			0.5, 0.5000001, 0.1,
			0.3, 0.3, 0.3,
		}, 3, 3)
	}
	own := func(v ...float32) *tensor.Tensor { return tensor.FromFloat32(v, 3, 3) }

	It("rejects the second of two bit-equal scores, in a row other than the first, although the oracle calls it a near-tie", func() {
		want := tensor.FromInt64([]int64{1, 1, 0}, 3)
		got := tensor.FromInt64([]int64{1, 1, 0}, 3)
		scores := own(0.1, 0.7, 0.2, 0.5, 0.5, 0.1, 0.3, 0.3, 0.3)
		m := compare.ClassesOwn("classes", want, got, oracle(), scores, 1, tol)
		Expect(m.OK).To(BeFalse())
		Expect(m.Mismatches).To(Equal(1))
		Expect(m.First[0].Index).To(Equal([]int{1}))
		Expect(m.Report).To(HavePrefix("classes: 1 / 3 mismatched (33.3%); first mismatches: [1] want 1 got 1 (not the argmax of its own scores: its score 0.5 at 1, 0.5 at 0)"))
		// The old rule alone accepted it.
		Expect(compare.Classes("classes", want, got, oracle(), 1, tol).OK).To(BeTrue())
	})

	It("accepts the first of bit-equal scores where the oracle prefers the other within tolerance", func() {
		want := tensor.FromInt64([]int64{1, 1, 0}, 3)
		got := tensor.FromInt64([]int64{1, 0, 0}, 3)
		m := compare.ClassesOwn("classes", want, got, oracle(), own(0.1, 0.7, 0.2, 0.5, 0.5, 0.1, 0.3, 0.3, 0.3), 1, tol)
		Expect(m.OK).To(BeTrue(), m.Report)
		Expect(m.NearTies).To(HaveLen(2))
	})

	It("holds a class to the executor's first NaN", func() {
		nan32 := float32(math.NaN())
		want := tensor.FromInt64([]int64{1, 1, 0}, 3)
		got := tensor.FromInt64([]int64{1, 1, 2}, 3)
		m := compare.ClassesOwn("classes", want, got, oracle(), own(0.1, 0.7, 0.2, 0.5, 0.6, 0.1, 0.3, nan32, nan32), 1, tol)
		Expect(m.Mismatches).To(Equal(1))
		Expect(m.Report).To(ContainSubstring("[2] want 0 got 2 (not the argmax of its own scores: its score NaN at 2, NaN at 1)"))
	})

	It("does not use scores of another shape", func() {
		want := tensor.FromInt64([]int64{1, 1, 0}, 3)
		m := compare.ClassesOwn("classes", want, want, oracle(), tensor.FromFloat32([]float32{1, 2}, 2), 1, tol)
		Expect(m.OK).To(BeTrue())
	})
})

var _ = Describe("ClassSources", func() {
	src := func(body string) map[string]compare.ClassSource {
		f := parseRx("c.rx", "package c\n\nfunc f(x [B][3]float32) (probs [B][3]float32, classes [B]int64) {\n"+body+"\n\treturn\n}\n")
		return compare.ClassSources(f.Funcs[0])
	}

	It("marks classes taken from the final scores", func() {
		Expect(src("\tprobs = Softmax(x, 1)\n\tclasses = Argmax(probs, 1)")).To(Equal(map[string]compare.ClassSource{
			"classes": {Scores: "probs", Axis: 1, Final: true}}))
	})

	It("does not when the scores change after the classes were taken, or in the same loop", func() {
		Expect(src("\tprobs = Softmax(x, 1)\n\tclasses = Argmax(probs, 1)\n\tprobs = probs * 0")["classes"].Final).To(BeFalse())
		Expect(src("\tprobs = x\n\tclasses = Argmax(probs, 1)\n\tfor i := range 2 {\n\t\tprobs = Tanh(probs)\n\t\tclasses = Argmax(probs, 1)\n\t}")["classes"].Final).To(BeFalse())
	})
})

var _ = Describe("ULP", func() {
	It("measures the ULP distance and where it is greatest", func() {
		a := tensor.FromFloat32([]float32{1, 2, 0, -1}, 2, 2)
		b := tensor.FromFloat32([]float32{math.Nextafter32(1, 2), 2, float32(math.Copysign(0, -1)), math.Nextafter32(math.Nextafter32(-1, -2), -2)}, 2, 2)
		m := compare.ULP("logits", a, b)
		Expect(m.OK).To(BeTrue())
		Expect(m.MaxULP).To(Equal(uint64(2)))
		Expect(m.MaxULPIndex).To(Equal([]int{1, 1}))
		Expect(m.Report).To(Equal("logits: max ULP distance 2 at [1 1] over 4 elements"))
	})
	It("counts ULPs across zero", func() {
		tiny := float32(math.Ldexp(1, -149))
		m := compare.ULP("x", tensor.FromFloat32([]float32{-tiny}, 1), tensor.FromFloat32([]float32{tiny}, 1))
		Expect(m.MaxULP).To(Equal(uint64(2)))
	})
	It("requires NaN and Inf to agree", func() {
		a := tensor.FromFloat32(f32(nan, 1, pinf, pinf), 4)
		b := tensor.FromFloat32(f32(1, 1, ninf, pinf), 4)
		m := compare.ULP("x", a, b)
		Expect(m.OK).To(BeFalse())
		Expect(m.NaNMismatches).To(Equal(1))
		Expect(m.InfMismatches).To(Equal(1))
		Expect(m.Report).To(Equal("x: max ULP distance 0 at [1] over 4 elements; 1 NaN disagreements; 1 Inf disagreements"))
	})
	It("compares int64 exactly and refuses float64", func() {
		m := compare.ULP("c", tensor.FromInt64([]int64{1, 2}, 2), tensor.FromInt64([]int64{1, 3}, 2))
		Expect(m.OK).To(BeFalse())
		Expect(m.Mismatches).To(Equal(1))
		m = compare.ULP("c", tensor.NewFloat64(2), tensor.NewFloat32(2))
		Expect(m.Problem).To(HavePrefix("dtype mismatch"))
	})
})

var _ = Describe("ToOracle beyond the float32 range", func() {
	It("compares a float64 want that float32 cannot hold as the infinity it rounds to", func() {
		want := tensor.FromFloat64([]float64{math.Exp(100), -1e39, 3.4028234e38, 1e39}, 4)
		got := tensor.FromFloat32([]float32{float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, math.MaxFloat32}, 4)
		m := compare.ToOracle("e", want, got, compare.DefaultTolerance())
		Expect(m.Mismatches).To(Equal(1), m.Report)
		Expect(m.First[0].Index).To(Equal([]int{3}), "1e39 rounds to +Inf, not to the largest float32")
	})
	It("keeps float64 against float64 exact", func() {
		want := tensor.FromFloat64([]float64{math.Exp(100)}, 1)
		got := tensor.FromFloat64([]float64{math.Inf(1)}, 1)
		Expect(compare.ToOracle("e", want, got, compare.DefaultTolerance()).OK).To(BeFalse())
	})
})

// Issue 15 item 3: a tolerance in ULPs.
var _ = Describe("ToOracle with a ULP bound", func() {
	one := float32(1)
	up := func(x float32, n int) float32 {
		for range n {
			x = math.Nextafter32(x, 2)
		}
		return x
	}
	want := tensor.FromFloat64([]float64{1, 1, 1}, 3)

	It("fails an element within rtol and atol but beyond the ULP bound", func() {
		got := tensor.FromFloat32([]float32{one, up(one, 2), up(one, 3)}, 3)
		tol := compare.Tolerance{RTol: 1e-4, ATol: 3e-6, ULP: 2, UseULP: true}
		m := compare.ToOracle("t", want, got, tol)
		Expect(m.Mismatches).To(Equal(1))
		Expect(m.ULPMismatches).To(Equal(1))
		Expect(m.First[0].Index).To(Equal([]int{2}))
		Expect(compare.ToOracle("t", want, got, compare.Tolerance{RTol: 1e-4, ATol: 3e-6}).OK).To(BeTrue(), "rtol alone lets it pass")
	})

	It("applies the ULP bound alone when rtol and atol were not given", func() {
		far := tensor.FromFloat64([]float64{1e30}, 1)
		got := tensor.FromFloat32([]float32{up(1e30, 1)}, 1)
		Expect(compare.ToOracle("t", far, got, compare.Tolerance{ULP: 1, UseULP: true, NoAbsRel: true}).OK).To(BeTrue())
		Expect(compare.ToOracle("t", far, got, compare.Tolerance{ULP: 0, UseULP: true, NoAbsRel: true}).OK).To(BeFalse())
	})

	It("reads the bound from //rx:tolerance", func() {
		f := parseRx("u.rx", "//rx:input x normal(0, 1)\n//rx:tolerance y ulp=2\n//rx:tolerance z ulp=1 rtol=1e-3 atol=0\npackage u\n\nfunc f(x [B][2]float32) (y [B][2]float32, z [B][2]float32) {\n\ty = Tanh(x)\n\tz = x\n\treturn\n}\n")
		tols := compare.Tolerances(f, f.Funcs[0], compare.DefaultTolerance())
		Expect(tols["y"]).To(Equal(compare.Tolerance{ULP: 2, UseULP: true, NoAbsRel: true}))
		Expect(tols["z"]).To(Equal(compare.Tolerance{RTol: 1e-3, ULP: 1, UseULP: true}))
	})

	It("gives an executor named by for= its own bound, whatever the order, and every other executor the general one", func() {
		f := parseRx("u.rx", "//rx:input x normal(0, 1)\n//rx:tolerance y ulp=1 for=torch,numpy\n//rx:tolerance y ulp=0\n//rx:tolerance y ulp=5 for=onnxruntime\npackage u\n\nfunc f(x [B][2]float32) (y [B][2]float32, z [B][2]float32) {\n\ty = Tanh(x)\n\tz = x\n\treturn\n}\n")
		exact := compare.Tolerance{ULP: 0, UseULP: true, NoAbsRel: true}
		Expect(compare.Tolerances(f, f.Funcs[0], compare.DefaultTolerance())["y"]).To(Equal(exact))
		Expect(compare.TolerancesFor(f, f.Funcs[0], compare.DefaultTolerance(), "native")["y"]).To(Equal(exact))
		Expect(compare.TolerancesFor(f, f.Funcs[0], compare.DefaultTolerance(), "torch")["y"]).To(Equal(compare.Tolerance{ULP: 1, UseULP: true, NoAbsRel: true}))
		Expect(compare.TolerancesFor(f, f.Funcs[0], compare.DefaultTolerance(), "numpy")["y"]).To(Equal(compare.Tolerance{ULP: 1, UseULP: true, NoAbsRel: true}))
		Expect(compare.TolerancesFor(f, f.Funcs[0], compare.DefaultTolerance(), "onnxruntime")["y"]).To(Equal(compare.Tolerance{ULP: 5, UseULP: true, NoAbsRel: true}))
		Expect(compare.TolerancesFor(f, f.Funcs[0], compare.DefaultTolerance(), "torch")["z"]).To(Equal(compare.DefaultTolerance()), "z has no directive")
	})
})

var _ = Describe("a ULP bound alone", func() {
	tol := compare.Tolerance{ULP: 2, UseULP: true, NoAbsRel: true}

	It("allows a finite amount, a few float32 spacings, not everything", func() {
		Expect(tol.Allowed(1)).To(BeNumerically("~", 3*float64(math.Nextafter32(1, 2)-1), 1e-12))
		Expect(math.IsInf(tol.Allowed(1e30), 0)).To(BeFalse())
		Expect(tol.Allowed(0)).To(BeNumerically(">", 0))
	})

	It("keeps the near-tie rule for classes: a far class is still a flip", func() {
		scores := tensor.FromFloat64([]float64{0.9, 0.1, 0.5}, 1, 3)
		m := compare.Classes("c", tensor.FromInt64([]int64{0}, 1), tensor.FromInt64([]int64{2}, 1), scores, 1, tol)
		Expect(m.OK).To(BeFalse())
		Expect(m.NearTies).To(BeEmpty())
	})
})

var _ = Describe("signed zeros", func() {
	want := tensor.FromFloat64([]float64{0, math.Copysign(0, -1), 1}, 3)
	got := tensor.FromFloat32([]float32{float32(math.Copysign(0, -1)), float32(math.Copysign(0, -1)), 1}, 3)

	It("treats +0 and -0 as equal by default", func() {
		Expect(compare.ToOracle("out", want, got, compare.DefaultTolerance()).OK).To(BeTrue())
	})

	It("holds the sign of a zero with SignedZeros, counted apart and printed", func() {
		tol := compare.DefaultTolerance()
		tol.SignedZeros = true
		m := compare.ToOracle("out", want, got, tol)
		Expect(m.OK).To(BeFalse())
		Expect(m.SignedZeroMismatches).To(Equal(1))
		Expect(m.NonFiniteMismatches).To(BeZero())
		Expect(m.Report).To(ContainSubstring("[0] want 0 got -0"))
	})
})
