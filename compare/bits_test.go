package compare_test

import (
	"errors"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("BitDiff and Bits (executors that must equal each other bit for bit)", func() {
	f := func(v ...float32) *tensor.Tensor { return tensor.FromFloat32(v, 1, len(v)) }
	nan := float32(math.NaN())

	It("accepts equal bits and any two NaNs", func() {
		negNaN := math.Float32frombits(0xffc00001)
		Expect(compare.BitDiff(f(1, nan, 3), f(1, negNaN, 3))).To(BeEmpty())
		Expect(compare.BitDiff(tensor.FromInt64([]int64{4, 5}, 2), tensor.FromInt64([]int64{4, 5}, 2))).To(BeEmpty())
	})

	It("tells +0 from -0 and one ULP apart, at the first differing index", func() {
		Expect(compare.BitDiff(f(1, 0), f(1, float32(math.Copysign(0, -1))))).To(Equal("at [0 1]: 0 (0x00000000) vs -0 (0x80000000)"))
		Expect(compare.BitDiff(f(1, 2), f(math.Nextafter32(1, 2), 3))).To(Equal("at [0 0]: 1 (0x3f800000) vs 1.0000001 (0x3f800001)"))
	})

	It("reports a different shape, dtype or a missing tensor", func() {
		Expect(compare.BitDiff(f(1, 2), tensor.FromFloat32([]float32{1, 2}, 2))).To(Equal("shape or dtype differs: float32[1 2] vs float32[2]"))
		Expect(compare.BitDiff(f(1), nil)).To(Equal("shape or dtype differs: float32[1 1] vs missing"))
	})

	It("names both executors and every output that differs, in name order", func() {
		want := map[string]*tensor.Tensor{"b": f(1, 2), "a": f(3)}
		got := map[string]*tensor.Tensor{"b": f(1, 2.5), "a": f(3), "c": f(0)}
		ok, msg := compare.Bits("native-avx2", "native", want, nil, got, nil)
		Expect(ok).To(BeFalse())
		Expect(msg).To(Equal("native-avx2 differs bit for bit from native, which it must equal: " +
			"b: at [0 1]: 2.5 (0x40200000) vs 2 (0x40000000) (native-avx2 vs native); " +
			"c: shape or dtype differs: float32[1 1] vs missing (native-avx2 vs native)"))
		ok, msg = compare.Bits("native-avx2", "native", want, nil, want, nil)
		Expect(ok).To(BeTrue())
		Expect(msg).To(BeEmpty())
	})

	It("holds errors to the same kind and text, and one failing alone to a mismatch", func() {
		e1 := &ir.RuntimeError{Func: "f", Kind: ir.ErrDivisionByZero, Detail: "CheckedRem: division by zero (i=3)"}
		e2 := &ir.RuntimeError{Func: "f", Kind: ir.ErrDivisionByZero, Detail: "CheckedRem: division by zero (i=4)"}
		ok, _ := compare.Bits("v", "t", nil, e1, nil, e1)
		Expect(ok).To(BeTrue())
		ok, msg := compare.Bits("v", "t", nil, e1, nil, e2)
		Expect(ok).To(BeFalse())
		Expect(msg).To(HavePrefix("v and t, which must fail alike, fail differently: error message differs"))
		ok, msg = compare.Bits("v", "t", map[string]*tensor.Tensor{"y": f(1)}, nil, nil, errors.New("boom"))
		Expect(ok).To(BeFalse())
		Expect(msg).To(HavePrefix("v failed but t, which it must equal bit for bit, succeeded: "))
		Expect(msg).To(ContainSubstring("boom"))
		ok, msg = compare.Bits("v", "t", nil, errors.New("boom"), map[string]*tensor.Tensor{"y": f(1)}, nil)
		Expect(ok).To(BeFalse())
		Expect(msg).To(HavePrefix("v succeeded but t, which it must equal bit for bit, failed with "))
	})
})
