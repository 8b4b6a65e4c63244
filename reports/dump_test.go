package reports_test

import (
	"encoding/json"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/reports"
	"github.com/rextio/rxeq/tensor"
	"github.com/rextio/rxeq/tensor/npy"
)

var _ = Describe("WriteDump", func() {
	x := tensor.FromFloat32([]float32{1, 2, 3, 4}, 2, 2)
	phase := tensor.Scalar(1)
	probsF := tensor.FromFloat32([]float32{0.25, 0.75}, 2)
	probsO := tensor.FromFloat64([]float64{0.25, 0.75}, 2)
	classes := tensor.FromInt64([]int64{1, 0}, 2)

	It("writes inputs and each executor's outputs as .npy files with a manifest", func() {
		dir := GinkgoT().TempDir()
		cases := []reports.DumpCase{
			{Name: "reference/score_linear/b2",
				Inputs: map[string]*tensor.Tensor{"x": x, "phase": phase},
				Outputs: map[string]map[string]*tensor.Tensor{
					"oracle": {"probs": probsO, "classes": classes},
					"native": {"probs": probsF, "classes": classes},
				},
				Errors: map[string]string{"fallback": "score_linear: boom"}},
			{Name: "reference/score_linear/b2", Inputs: map[string]*tensor.Tensor{"x": x}},
			{Name: "../odd name", Inputs: map[string]*tensor.Tensor{"a b": phase}},
		}
		Expect(reports.WriteDump(dir, cases)).To(Succeed())

		raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		Expect(err).NotTo(HaveOccurred())
		var man reports.Manifest
		Expect(json.Unmarshal(raw, &man)).To(Succeed())
		Expect(man.Schema).To(Equal("rxeq.dump/v1"))
		Expect(man.Cases).To(HaveLen(3))

		c := man.Cases[0]
		Expect(c.Name).To(Equal("reference/score_linear/b2"))
		Expect(c.Dir).To(Equal("reference/score_linear/b2"))
		Expect(c.Errors).To(Equal(map[string]string{"fallback": "score_linear: boom"}))
		Expect(c.Inputs).To(Equal([]reports.ManifestArray{
			{Name: "phase", Path: "reference/score_linear/b2/inputs/phase.npy", DType: "int64", Descr: "<i8", Shape: []int{}},
			{Name: "x", Path: "reference/score_linear/b2/inputs/x.npy", DType: "float32", Descr: "<f4", Shape: []int{2, 2}},
		}))
		paths := []string{}
		for _, o := range c.Outputs {
			paths = append(paths, o.Executor+":"+o.Path)
		}
		Expect(paths).To(Equal([]string{
			"native:reference/score_linear/b2/outputs/native/classes.npy",
			"native:reference/score_linear/b2/outputs/native/probs.npy",
			"oracle:reference/score_linear/b2/outputs/oracle/classes.npy",
			"oracle:reference/score_linear/b2/outputs/oracle/probs.npy",
		}))
		Expect(c.Outputs[3].Descr).To(Equal("<f8"))
		Expect(man.Cases[1].Dir).To(Equal("reference/score_linear/b2-2"))
		Expect(man.Cases[2].Dir).To(Equal("__/odd_name"))
		Expect(man.Cases[2].Inputs[0].Path).To(Equal("__/odd_name/inputs/a_b.npy"))

		// Every listed file reads back as the tensor it came from.
		back, err := npy.ReadFile(filepath.Join(dir, "reference/score_linear/b2/outputs/oracle/probs.npy"))
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(probsO))
		for _, mc := range man.Cases {
			for _, a := range append(mc.Inputs, mc.Outputs...) {
				Expect(filepath.Join(dir, a.Path)).To(BeAnExistingFile())
			}
		}
	})

	It("fails on a malformed tensor and names it", func() {
		bad := &tensor.Tensor{DType: tensor.Int64, Shape: []int{2}}
		err := reports.WriteDump(GinkgoT().TempDir(), []reports.DumpCase{{Name: "c", Inputs: map[string]*tensor.Tensor{"n": bad}}})
		Expect(err).To(MatchError(ContainSubstring("dump of case c: input n")))
	})
})
