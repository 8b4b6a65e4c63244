package rxginkgo_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/rxginkgo"
	"github.com/rextio/rxeq/sweep"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("AgreeWith: the user's own Go code against the oracle", func() {
	// scorer.rx describes the Go function: y = Tanh(x) * 2, with a tight
	// bound on y; and a checked division by n.
	write := func() string {
		path := filepath.Join(GinkgoT().TempDir(), "scorer.rx")
		src := "//rx:scenario mine\n//rx:batches 1 3\n//rx:input x normal(0, 1)\n//rx:tolerance y rtol=1e-6 atol=1e-7\npackage p\n\n" +
			"func score(x [B][4]float32) (y [B][4]float32) {\n\ty = Tanh(x) * 2.0\n\treturn\n}\n"
		Expect(os.WriteFile(path, []byte(src), 0o600)).To(Succeed())
		return path
	}
	// ratio.rx: a checked division by n = 0, an error every executor must
	// give.
	writeRatio := func() string {
		path := filepath.Join(GinkgoT().TempDir(), "ratio.rx")
		src := "//rx:scenario ratio\n//rx:input x normal(0, 1)\n//rx:input n const(0)\n//rx:expect-error \"CheckedDiv: division by zero\"\npackage p\n\n" +
			"func ratio(x [B][4]float32, n int64) (y [B][4]float32) {\n\ty = x\n\tif CheckedDiv(8, n) > 1 {\n\t\ty = x * 2.0\n\t}\n\treturn\n}\n"
		Expect(os.WriteFile(path, []byte(src), 0o600)).To(Succeed())
		return path
	}
	// goScore is the Go implementation; off moves one element.
	goScore := func(off float32) func(map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
		return func(in map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
			x := in["x"]
			y := make([]float32, len(x.F32))
			for i, v := range x.F32 {
				y[i] = float32(math.Tanh(float64(v))) * 2
			}
			y[len(y)-1] += off
			return map[string]*tensor.Tensor{"y": tensor.FromFloat32(y, x.Shape...)}, nil
		}
	}

	It("passes a correct plain Go function at every batch of the file", func() {
		Expect(goScore(0)).To(rxginkgo.AgreeWith(write(), "score"))
	})

	It("fails a wrong one, pointing at the //rx:tolerance line whose bound it broke", func() {
		path := write()
		m := rxginkgo.AgreeWith(path, "score")
		ok, err := m.Match(goScore(1e-3))
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse())
		msg := m.FailureMessage(nil)
		Expect(msg).To(HavePrefix(path + ":4: mine/score/b1/go (function score at " + path + ":7)\n"))
		Expect(msg).To(ContainSubstring(path + ":4: mine/score/b3/go"))
		Expect(msg).To(ContainSubstring("y: bound set by the //rx:tolerance at " + path + ":4"))
		Expect(msg).To(ContainSubstring("y: 1 / 4 mismatched"))
	})

	It("compares errors by kind alone with ErrorKinds, for code that words them its own way", func() {
		path := writeRatio()
		mine := rxginkgo.Func(func(_ context.Context, in map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
			return nil, fmt.Errorf("ratio: cannot divide by n=%d: %w", in["n"].I64[0], ir.ErrDivisionByZero)
		})
		m := rxginkgo.AgreeWith(path, "ratio")
		ok, err := m.Match(mine)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse(), "the texts differ")
		Expect(m.FailureMessage(nil)).To(ContainSubstring("error message differs"))
		Expect(mine).To(rxginkgo.AgreeWith(path, "ratio", harness.Options{ErrorKinds: true}))
		wrongKind := rxginkgo.Func(func(context.Context, map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
			return nil, fmt.Errorf("ratio: %w", ir.ErrShape)
		})
		Expect(wrongKind).NotTo(rxginkgo.AgreeWith(path, "ratio", harness.Options{ErrorKinds: true}))
	})

	It("says what it cannot judge: another type, a missing function", func() {
		_, err := rxginkgo.AgreeWith(write(), "score").Match(42)
		Expect(err).To(MatchError(ContainSubstring("AgreeWith expects a rxginkgo.Func")))
		_, err = rxginkgo.AgreeWith(write(), "nope").Match(goScore(0))
		Expect(err).To(MatchError(ContainSubstring("has no function nope")))
	})

	It("AgreeOnSweep finds an input the file's own distributions miss, and shrinks it", func() {
		path := filepath.Join(GinkgoT().TempDir(), "exp.rx")
		src := "//rx:scenario expo\n//rx:batches 4\n//rx:input x normal(0, 1)\npackage p\n\nfunc e(x [B][2]float32) (y [B][2]float32) {\n\ty = Exp(x)\n\treturn\n}\n"
		Expect(os.WriteFile(path, []byte(src), 0o600)).To(Succeed())
		// clamped saturates at exp(50): right on normal(0, 1) inputs,
		// wrong on large ones.
		clamped := func(in map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
			x := in["x"]
			y := make([]float32, len(x.F32))
			for i, v := range x.F32 {
				y[i] = float32(math.Exp(math.Min(float64(v), 50)))
			}
			return map[string]*tensor.Tensor{"y": tensor.FromFloat32(y, x.Shape...)}, nil
		}
		Expect(clamped).To(rxginkgo.AgreeWith(path, "e"))
		m := rxginkgo.AgreeOnSweep(path, "e", sweep.Options{Seeds: 20})
		ok, err := m.Match(clamped)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse())
		msg := m.FailureMessage(nil)
		Expect(msg).To(MatchRegexp(`^expo/e/b4: seed \d+, inputs from edge\(\w+\), after \d+ cases:`))
		Expect(msg).To(ContainSubstring("to 1 row(s):\n    x [1 2] = [0 10000]\n    y: "))
	})
})
