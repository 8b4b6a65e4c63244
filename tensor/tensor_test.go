package tensor_test

import (
	"errors"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("Tensor", func() {
	It("clones a map of tensors deeply, a nil tensor as nil", func() {
		x := tensor.FromFloat32([]float32{1, 2}, 2)
		m := map[string]*tensor.Tensor{"x": x, "none": nil}
		c := tensor.CloneMap(m)
		Expect(c).To(HaveLen(2))
		Expect(c["none"]).To(BeNil())
		Expect(c["x"]).To(Equal(x))
		x.F32[0] = 9
		Expect(c["x"].F32).To(Equal([]float32{1, 2}), "the copy keeps its values")
		Expect(tensor.CloneMap(nil)).To(BeEmpty())
	})

	It("validates shape against data", func() {
		Expect(tensor.NewFloat32(2, 3).Validate()).To(Succeed())
		Expect(tensor.Scalar(3).Validate()).To(Succeed())
		bad := tensor.FromFloat32(make([]float32, 5), 2, 3)
		err := bad.Validate()
		Expect(errors.Is(err, tensor.ErrInvalid)).To(BeTrue())
		Expect(err).To(MatchError("invalid tensor: shape [2 3] needs 6 elements, data has 5"))
		Expect((&tensor.Tensor{DType: tensor.Float32, Shape: []int{-1}}).Validate()).To(MatchError(ContainSubstring("dimension 0 is negative")))
		var nilT *tensor.Tensor
		Expect(nilT.Validate()).To(MatchError(ContainSubstring("nil tensor")))
	})

	It("counts elements with checked arithmetic", func() {
		count := func(shape ...int) int {
			n, ok := tensor.CheckedNumElements(shape)
			Expect(ok).To(BeTrue(), "%v", shape)
			return n
		}
		Expect(count(2, 3, 4)).To(Equal(24))
		Expect(count()).To(Equal(1))
		// A zero dimension makes the product 0, whatever comes before it.
		Expect(count(1<<40, 1<<40, 0)).To(Equal(0))
		Expect(count(tensor.MaxElements)).To(Equal(tensor.MaxElements))
		for _, shape := range [][]int{{tensor.MaxElements + 1}, {1 << 32, 1 << 32}, {1 << 30, 1 << 30, 2}, {3, -1}} {
			_, ok := tensor.CheckedNumElements(shape)
			Expect(ok).To(BeFalse(), "%v", shape)
		}
	})

	It("rejects a shape whose element count overflows, even when the wrapped product matches the data", func() {
		// 2^32 × 2^32 wraps to 0 in int arithmetic: an empty slice would
		// pass a naive length check.
		t := tensor.FromFloat32(nil, 1<<32, 1<<32)
		err := t.Validate()
		Expect(errors.Is(err, tensor.ErrInvalid)).To(BeTrue())
		Expect(err).To(MatchError("invalid tensor: shape [4294967296 4294967296] has more than 1152921504606846975 elements (2^60 - 1), the most a tensor may hold"))
	})

	It("converts between flat offsets and indices", func() {
		Expect(tensor.Index([]int{128, 8}, 12*8+3)).To(Equal([]int{12, 3}))
		Expect(tensor.FormatIndex([]int{12, 3})).To(Equal("[12 3]"))
		Expect(tensor.Strides([]int{2, 3, 4})).To(Equal([]int{12, 4, 1}))
	})

	It("widens float32 exactly and clones deeply", func() {
		t := tensor.FromFloat32([]float32{0.1, -2}, 2)
		Expect(t.Float64s()).To(Equal([]float64{float64(float32(0.1)), -2}))
		c := t.Clone()
		c.F32[0] = 9
		Expect(t.F32[0]).To(Equal(float32(0.1)))
	})
})

var _ = Describe("Distributions", func() {
	DescribeTable("parse the directive syntax",
		func(src string, want tensor.Dist) {
			d, err := tensor.ParseDist(src)
			Expect(err).NotTo(HaveOccurred())
			Expect(d).To(Equal(want))
			again, err := tensor.ParseDist(d.String())
			Expect(err).NotTo(HaveOccurred())
			Expect(again).To(Equal(want))
		},
		Entry("normal", "normal(0, 0.3)", tensor.Dist{Kind: tensor.Normal, B: 0.3}),
		Entry("uniform", " uniform(-0.1,0.1) ", tensor.Dist{Kind: tensor.Uniform, A: -0.1, B: 0.1}),
		Entry("const", "const(2)", tensor.Dist{Kind: tensor.Const, A: 2}),
		Entry("edge", "edge(large)", tensor.Dist{Kind: tensor.Edge, Edge: "large"}),
	)

	DescribeTable("reject malformed text with what was expected",
		func(src, want string) {
			_, err := tensor.ParseDist(src)
			Expect(errors.Is(err, tensor.ErrDist)).To(BeTrue())
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("no parens", "normal", "want NAME(args)"),
		Entry("arity", "uniform(1)", "uniform takes 2 argument(s)"),
		Entry("not a number", "normal(0, x)", `argument 2 ("x") is not a finite number`),
		Entry("NaN", "const(NaN)", "is not a finite number"),
		Entry("negative std", "normal(0, -1)", "std must be >= 0"),
		Entry("reversed bounds", "uniform(1, 0)", "lo must be <= hi"),
		Entry("unknown edge", "edge(enormous)", `unknown edge kind "enormous", want one of large, ties, zeros, tiny, specials, overflow, huge`),
		Entry("unknown family", "poisson(3)", `unknown distribution "poisson"`),
	)

	It("derives the same seed on every run and machine (pinned)", func() {
		Expect(tensor.DeriveSeed(20261202, "small-batch-scoring/score_linear/b16/x")).To(Equal(uint64(3768498608634446361)))
		Expect(tensor.DeriveSeed(20261202, "a")).NotTo(Equal(tensor.DeriveSeed(20261202, "b")))
		Expect(tensor.DeriveSeed(1, "a")).NotTo(Equal(tensor.DeriveSeed(2, "a")))
	})

	It("generates pinned bytes from a seed", func() {
		d, _ := tensor.ParseDist("normal(0, 1)")
		Expect(tensor.Generate(d, 42, 4).F32).To(Equal([]float32{0.7656052, 0.33730713, 0.03251269, 0.16039388}))
		d, _ = tensor.ParseDist("uniform(-0.1, 0.1)")
		Expect(tensor.Generate(d, 42, 3).F32).To(Equal([]float32{-0.0005448061, 0.034006793, 0.060293008}))
		d, _ = tensor.ParseDist("edge(ties)")
		Expect(tensor.Generate(d, 7, 8).F32).To(Equal([]float32{-1, 0, -1, -1, -1, 0, 1, 0}))
		d, _ = tensor.ParseDist("edge(large)")
		Expect(tensor.Generate(d, 7, 3).F32).To(Equal([]float32{-10591.191, -9981.444, 10994.379}))
	})

	It("keeps draws within their families", func() {
		u, _ := tensor.ParseDist("uniform(2, 3)")
		for _, v := range tensor.Generate(u, 1, 1000).F32 {
			Expect(v).To(BeNumerically(">=", 2))
			Expect(v).To(BeNumerically("<=", 3))
		}
		n, _ := tensor.ParseDist("normal(5, 2)")
		xs := tensor.Generate(n, 3, 20000).F32
		var sum, sq float64
		for _, v := range xs {
			sum += float64(v)
			sq += float64(v) * float64(v)
		}
		mean := sum / float64(len(xs))
		std := math.Sqrt(sq/float64(len(xs)) - mean*mean)
		Expect(mean).To(BeNumerically("~", 5, 0.05))
		Expect(std).To(BeNumerically("~", 2, 0.05))
		z, _ := tensor.ParseDist("edge(zeros)")
		Expect(tensor.Generate(z, 1, 4).F32).To(Equal([]float32{0, 0, 0, 0}))
		tiny, _ := tensor.ParseDist("edge(tiny)")
		for _, v := range tensor.Generate(tiny, 1, 100).F32 {
			Expect(math.Abs(float64(v))).To(BeNumerically("<", 1e-29))
			Expect(v).NotTo(BeZero())
		}
	})
})

var _ = Describe("edge distributions for the op-edge catalog", func() {
	count := func(kind string, pred func(float32) bool) int {
		d, err := tensor.ParseDist("edge(" + kind + ")")
		Expect(err).NotTo(HaveOccurred())
		n := 0
		for _, v := range tensor.Generate(d, 7, 4096).F32 {
			if pred(v) {
				n++
			}
		}
		return n
	}
	It("draws every IEEE special class from edge(specials)", func() {
		f := func(v float32) float64 { return float64(v) }
		Expect(count("specials", func(v float32) bool { return math.IsNaN(f(v)) })).To(BeNumerically(">", 100))
		Expect(count("specials", func(v float32) bool { return math.IsInf(f(v), 1) })).To(BeNumerically(">", 100))
		Expect(count("specials", func(v float32) bool { return math.IsInf(f(v), -1) })).To(BeNumerically(">", 100))
		Expect(count("specials", func(v float32) bool { return v == 0 && math.Signbit(f(v)) })).To(BeNumerically(">", 100))
		Expect(count("specials", func(v float32) bool { return v == 0 && !math.Signbit(f(v)) })).To(BeNumerically(">", 100))
		Expect(count("specials", func(v float32) bool { return v != 0 && math.Abs(f(v)) < 0x1p-126 })).To(BeNumerically(">", 200))
	})
	It("draws magnitudes where naive formulas break from edge(overflow) and near the float32 maximum from edge(huge)", func() {
		Expect(count("overflow", func(v float32) bool { a := math.Abs(float64(v)); return a >= 40 && a <= 100 })).To(Equal(4096))
		Expect(count("overflow", func(v float32) bool { return v > 88.8 })).To(BeNumerically(">", 100))
		Expect(count("huge", func(v float32) bool { a := math.Abs(float64(v)); return a >= 1e36 && a <= 3e38 })).To(Equal(4096))
	})
})
