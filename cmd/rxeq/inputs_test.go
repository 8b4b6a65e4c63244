package main

import (
	"os"
	"path/filepath"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/tensor"
	"github.com/rextio/rxeq/tensor/npy"
)

// replaySrc is a small scenario with a batch-shaped input, a weight and an
// int64 scalar, so a dump holds every kind of input file.
const replaySrc = `//rx:scenario replay
//rx:batches 1 3
//rx:seed 11
//rx:input x normal(0, 1)
//rx:input w normal(0, 0.5)
//rx:input rounds const(2)
package replay

func score(x [B][4]float32, w [4][3]float32, rounds int64) (logits [B][3]float32, probs [B][3]float32, classes [B]int64) {
	logits = MatMul(x, w)
	for i := range rounds {
		logits = Tanh(logits) * 2
	}
	probs = Softmax(logits, 1)
	classes = Argmax(probs, 1)
	return
}
`

var _ = Describe("rxeq run --inputs", Label("e2e"), func() {
	var dir, rx string
	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		rx = filepath.Join(dir, "replay.rx")
		Expect(os.WriteFile(rx, []byte(replaySrc), 0o644)).To(Succeed())
	})

	It("replays a --dump directory: the same inputs and the same outputs, byte for byte", Label("native"), func() {
		first, second := filepath.Join(dir, "first"), filepath.Join(dir, "second")
		code, out, errOut := rxeq("run", "--backend", "oracle,fallback,native", "--dump", first, rx)
		Expect(code).To(Equal(0), out+errOut)
		code, out, errOut = rxeq("run", "--backend", "oracle,fallback,native", "--inputs", first, "--dump", second, rx)
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(ContainSubstring("inputs of replay/score/b3: rounds from " + filepath.Join(first, "replay/score/b3/inputs/rounds.npy") +
			", w from " + filepath.Join(first, "replay/score/b3/inputs/w.npy") + ", x from " + filepath.Join(first, "replay/score/b3/inputs/x.npy")))
		Expect(out).To(ContainSubstring("inputs of replay/score/b1: "))

		var files []string
		Expect(filepath.WalkDir(first, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(first, path)
				files = append(files, rel)
			}
			return err
		})).To(Succeed())
		Expect(files).To(ContainElements("manifest.json", "replay/score/b3/inputs/x.npy", "replay/score/b3/outputs/native/probs.npy",
			"replay/score/b1/outputs/oracle/logits.npy", "replay/score/b1/outputs/fallback/classes.npy"))
		for _, rel := range files {
			a, err := os.ReadFile(filepath.Join(first, rel))
			Expect(err).NotTo(HaveOccurred())
			b, err := os.ReadFile(filepath.Join(second, rel))
			Expect(err).NotTo(HaveOccurred(), rel)
			Expect(b).To(Equal(a), rel)
		}
	})

	It("exits 2 before running anything when a file cannot be used, naming it and the fix", func() {
		in := filepath.Join(dir, "in")
		Expect(os.MkdirAll(in, 0o755)).To(Succeed())
		code, out, errOut := rxeq("run", "--backend", "oracle,fallback", "--inputs", in, rx)
		Expect(code).To(Equal(2), out+errOut)
		Expect(errOut).To(ContainSubstring("rxeq run: inputs: " + in + ": no .npy file for any parameter"))

		Expect(os.WriteFile(filepath.Join(in, "x.npy"), []byte("\x93NUMPY\x01\x00"), 0o644)).To(Succeed())
		code, out, errOut = rxeq("run", "--backend", "oracle,fallback", "--inputs", in, rx)
		Expect(code).To(Equal(2))
		Expect(out).To(BeEmpty())
		Expect(errOut).To(ContainSubstring("rxeq run: inputs: " + filepath.Join(in, "x.npy") + " (parameter x of score): npy: malformed file: truncated in the header length; write it again with np.save(path, a)"))
	})

	It("names every file that cannot be used, not just the first", func() {
		in := filepath.Join(dir, "in")
		Expect(os.MkdirAll(in, 0o755)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(in, "x.npy"), []byte("\x93NUMPY\x01\x00"), 0o644)).To(Succeed())
		Expect(npy.WriteFile(filepath.Join(in, "w.npy"), tensor.NewFloat32(5, 3))).To(Succeed())
		code, out, errOut := rxeq("run", "--backend", "oracle,fallback", "--inputs", in, rx)
		Expect(code).To(Equal(2), out+errOut)
		Expect(errOut).To(ContainSubstring("rxeq run: inputs: " + filepath.Join(in, "x.npy") + " (parameter x of score): npy: malformed file"))
		Expect(errOut).To(MatchRegexp(`\nrxeq run: inputs: ` + regexp.QuoteMeta(filepath.Join(in, "w.npy")) + `.*`))
	})

	It("selects among the data's batches with --batch", func() {
		in := filepath.Join(dir, "in")
		Expect(os.MkdirAll(filepath.Join(in, "replay/score/b3/inputs"), 0o755)).To(Succeed())
		Expect(npy.WriteFile(filepath.Join(in, "replay/score/b3/inputs/x.npy"), tensor.NewFloat32(3, 4))).To(Succeed())
		code, out, errOut := rxeq("run", "--backend", "oracle,fallback", "--inputs", in, "--batch", "2", rx)
		Expect(code).To(Equal(2), out+errOut)
		Expect(errOut).To(ContainSubstring("rxeq run: bad runner options: score of replay: the input files give batch 3; Batches [2] selects none of them"))
		code, out, errOut = rxeq("run", "--backend", "oracle,fallback", "--inputs", in, "--batch", "3", rx)
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(ContainSubstring("inputs of replay/score/b3: x from "))
		Expect(out).To(ContainSubstring("; generated from //rx:input: w, rounds"))
		Expect(out).To(MatchRegexp(`replay\s+score\s+3\s+fallback\s+fallback\s+PASS`))
	})
})
