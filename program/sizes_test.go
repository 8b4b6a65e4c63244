package program_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program"
)

var _ = Describe("shapes whose element count overflows", func() {
	check := func(src string) string {
		_, err := program.Parse("t.rx", []byte(src))
		if err == nil {
			return ""
		}
		return err.Error()
	}

	It("rejects a constant dimension, counting the largest batch, with the exact message", func() {
		msg := check(`package p
//rx:batches 1 16 128
const H = 4611686018427387904
func f(x [B][H][4]float32) (y [B]float32) { y = Sum(Sum(x, 2), 1); return }
`)
		// One error: the expressions built from x are not reported again.
		Expect(msg).To(Equal("t.rx:4:8: shape [B][4611686018427387904][4]float32 of parameter x has 128 × 4611686018427387904 × 4 ≈ 2^71 elements at batch B = 128 (the largest of //rx:batches): more than the 2^60 - 1 a tensor may hold, so that its size in bytes (8 per element) fits in int64; make its dimensions or the batches smaller"))
	})

	It("rejects a shape that overflows only at a batch of //rx:batches", func() {
		body := "package p\nfunc f(x [B][1073741824][268435456]float32) (y [B]float32) { y = Max(Max(x, 2), 1); return }\n"
		Expect(check(body)).To(BeEmpty(), "2^58 elements at batch 1")
		Expect(check("//rx:batches 1 16\n" + body)).To(Equal("t.rx:3:8: shape [B][1073741824][268435456]float32 of parameter x has 16 × 1073741824 × 268435456 ≈ 2^62 elements at batch B = 16 (the largest of //rx:batches): more than the 2^60 - 1 a tensor may hold, so that its size in bytes (8 per element) fits in int64; make its dimensions or the batches smaller"))
	})

	It("rejects a product of several moderate dimensions", func() {
		Expect(check("package p\nfunc f(x [65536][65536][65536][65536]float32) (y [1]float32) { y = Sum(Sum(Sum(Sum(x, 3), 2), 1), 0, true); return }\n")).
			To(HavePrefix("t.rx:2:8: shape [65536][65536][65536][65536]float32 of parameter x has 65536 × 65536 × 65536 × 65536 ≈ 2^64 elements: more than the 2^60 - 1"))
	})

	It("rejects an intermediate that overflows once, where it first appears", func() {
		msg := check(`package p
func f(a [1073741824][1]float32, b [1][2147483648]float32) (y [1]float32) {
	y = Sum(Sum(Tanh(a*b)+1, 1), 0, true)
	return
}
`)
		Expect(strings.Split(msg, "\n")).To(Equal([]string{
			"t.rx:3:20: shape [1073741824][2147483648]float32 of the result of * has 1073741824 × 2147483648 ≈ 2^61 elements: more than the 2^60 - 1 a tensor may hold, so that its size in bytes (8 per element) fits in int64; make its dimensions smaller",
		}))
		Expect(check("package p\nfunc f(a [2147483648][1]float32, b [1][2147483648]float32) (y [2147483648][2147483648]float32) { y = MatMul(a, b); return }\n")).
			To(Equal("t.rx:2:61: shape [2147483648][2147483648]float32 of result y has 2147483648 × 2147483648 ≈ 2^62 elements: more than the 2^60 - 1 a tensor may hold, so that its size in bytes (8 per element) fits in int64; make its dimensions smaller"), "one error: the MatMul has the type already reported")
	})

	It("accepts the largest shape that fits and takes other symbols at 1", func() {
		Expect(check("package p\nfunc f(x [1152921504606846975]float32) (y [1]float32) { y = Max(x, 0, true); return }\n")).To(BeEmpty())
		Expect(check("package p\nfunc f(x [1152921504606846976]float32) (y [1]float32) { y = Max(x, 0, true); return }\n")).
			To(ContainSubstring("has 1152921504606846976 ≈ 2^60 elements"))
		Expect(check("package p\n//rx:batches 4\nfunc f(x [B][K][1152921504606846975]float32) (y [B][K]float32) { y = Max(x, 2); return }\n")).
			To(ContainSubstring("at batch B = 4 (the largest of //rx:batches) even with K = 1"))
	})
})
