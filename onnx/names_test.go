package onnx_test

import (
	"fmt"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/tensor"
)

const hostileSrc = `package p

func größe(ρ [B][2]float32, rx_error int64, rx_v1 [2]float32, x [B][2]float32) (rx_r0_x [B][2]float32, Ünïcode [B]int64, rx_p0_ρ [B][2]float32) {
	rx_r0_x = ρ + rx_v1
	rx_p0_ρ = x
	for rx_v2 := range rx_error {
		rx_r0_x = rx_r0_x*0.5 + x
		if CheckedDiv(rx_v2, rx_error) == 0 {
			rx_p0_ρ = rx_p0_ρ - 1.0
		}
	}
	Ünïcode = Argmax(rx_r0_x, 1)
	return
}
`

var _ = Describe("Names", func() {
	It("keeps safe identifiers and mangles the rest so that no program name collides with another or with the exporter's own", func() {
		Expect(onnx.ModelName("logits", "r", 0)).To(Equal("logits"))
		Expect(onnx.ModelName("ρ", "p", 0)).To(Equal("rx_p0_"))
		Expect(onnx.ModelName("größe", "p", 3)).To(Equal("rx_p3_gre"))
		Expect(onnx.ModelName("rx_error", "p", 1)).To(Equal("rx_p1_rx_error"))
		Expect(onnx.ModelName("RX_x", "r", 2)).To(Equal("rx_r2_RX_x"))
		Expect(onnx.ModelName("_x", "r", 0)).To(Equal("rx_r0__x"))
	})

	It("writes a function whose names are hostile (Unicode, rxeq's own prefixes, the error output's name) as a valid model that computes the same", func() {
		requireONNX()
		p := lower("hostile.rx", hostileSrc)
		sig, err := onnx.Describe(p, "größe")
		Expect(err).NotTo(HaveOccurred())
		seen := map[string]bool{onnx.ErrorOutput: true}
		for _, port := range append(append([]onnx.Port{}, sig.Inputs...), sig.Outputs...) {
			Expect(seen).NotTo(HaveKey(port.Name))
			seen[port.Name] = true
		}
		Expect(sig.Inputs[1].Name).To(Equal("rx_p1_rx_error"))
		Expect(sig.Inputs[3].Name).To(Equal("x"))
		Expect(sig.Error).To(Equal(onnx.ErrorOutput))

		hostileMeta := onnx.Meta{Source: "dir/\xff\xfe\"quoted\"\n<script>.rx", Version: "v\x00\xc3"}
		b, err := onnx.Export(p, "größe", hostileMeta)
		Expect(err).NotTo(HaveOccurred())
		Expect(checkModels(map[string][]byte{"hostile": b})).To(HaveKeyWithValue("hostile", ""))
		m := readWithPython(b)
		Expect(utf8.ValidString(m.Doc)).To(BeTrue())
		Expect(m.Meta["rxeq.source"]).To(Equal("dir/\uFFFD\"quoted\"\n<script>.rx"))
		Expect(m.Graph.Name).To(Equal("größe"))

		x := tensor.FromFloat32([]float32{1, 2, 3, 4}, 2, 2)
		var cases []evalCase
		for _, n := range []int64{0, 1, 3} {
			cases = append(cases, evalCase{name: fmt.Sprint("n=", n), p: p, fn: "größe", inputs: map[string]*tensor.Tensor{
				"ρ": tensor.FromFloat32([]float32{0.5, -1, 2, 0}, 2, 2), "rx_error": tensor.Scalar(n),
				"rx_v1": tensor.FromFloat32([]float32{1, -1}, 2), "x": x}})
		}
		agree(cases...)
	})
})
