package fuzz_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fuzz"
)

var _ = Describe("TorchRepro", func() {
	src := []byte(`//rx:scenario r
//rx:batches 1 3
//rx:seed 24
//rx:input a0 edge(signedzeros)
//rx:input b0 edge(signedzeros)
package fuzz

const F = 4

func f0(a0 [B][F]float32, b0 [B][F]float32) (out1 [B][F]float32, m [B]float32) {
	t := Maximum(-a0, b0)
	out1 = 1.0 / t
	m = Max(Softmax(a0, -1), 1)
	return
}
`)

	It("writes a C++ program over ATen with the inputs, the ATen calls and the oracle's values, that exits 1 when they disagree", func() {
		rec := &fuzz.Record{ID: "torch-signed-zero-x", Kind: fuzz.KindMismatch, Func: "f0", Output: "out1", Framework: "libtorch (ATen)", Version: "1.13.0",
			Category: fuzz.CatSignedZero, Detail: "out1: 3 / 12 mismatched"}
		cc, err := fuzz.TorchRepro(src, rec)
		Expect(err).NotTo(HaveOccurred())
		text := string(cc)
		Expect(text).To(HavePrefix("// Standalone reproducer of rxeq finding torch-signed-zero-x (signed-zero, libtorch (ATen) 1.13.0).\n"))
		Expect(text).To(ContainSubstring("g++ -std=c++17 -O0 repro.cc -o repro -ltorch_cpu -lc10 && ./repro"))
		Expect(text).To(ContainSubstring("//   \tout1 = 1.0 / t\n"))
		Expect(text).To(MatchRegexp(`at::Tensor a0 = make\(\{(-?0x0p\+00f, ){11}-?0x0p\+00f\}, \{3, 4\}\);`))
		Expect(text).To(ContainSubstring("at::Tensor t = at::maximum(at::neg(a0), b0);"))
		Expect(text).To(ContainSubstring("at::Tensor out1 = at::div(at::scalar_tensor((float)1.0), t);"))
		Expect(text).To(ContainSubstring("at::Tensor m = at::amax(at::softmax(a0, -1), {1}, false);"))
		Expect(text).To(MatchRegexp(`bad \+= check\("out1", out1, \{(-?INFINITY, ){11}-?INFINITY\}\);`))
		Expect(text).NotTo(ContainSubstring(`check("m"`), "only the finding's output is judged")
		Expect(text).To(ContainSubstring("return bad ? 1 : 0;"))
	})

	It("declines what it cannot translate, with ErrNoRepro", func() {
		loop := []byte(`//rx:scenario r
package fuzz

func f0(a0 [B][4]float32) (out [B][4]float32) {
	out = a0
	for range 2 {
		out = Tanh(out)
	}
	return
}
`)
		_, err := fuzz.TorchRepro(loop, &fuzz.Record{Kind: fuzz.KindMismatch, Func: "f0", Output: "out"})
		Expect(errors.Is(err, fuzz.ErrNoRepro)).To(BeTrue(), "%v", err)
		_, err = fuzz.TorchRepro(src, &fuzz.Record{Kind: fuzz.KindPosition, Func: "f0"})
		Expect(err).To(MatchError(fuzz.ErrNoRepro))
	})
})
