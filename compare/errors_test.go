package compare_test

import (
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/program/ir"
)

var _ = Describe("Errors", func() {
	site := &ir.Site{Func: "score", Builtin: "CheckedRem", LHS: "round_idx + phase", Pos: "s.rx:9:6"}
	zero := ir.CheckedError(site, 3, 0)

	It("accepts two successes", func() {
		ok, msg := compare.Errors(nil, nil)
		Expect(ok).To(BeTrue())
		Expect(msg).To(BeEmpty())
	})
	It("accepts the same kind and text, even wrapped for context", func() {
		ok, msg := compare.Errors(zero, fmt.Errorf("native: %w", ir.CheckedError(site, 3, 0)))
		Expect(ok).To(BeTrue(), msg)
	})
	It("rejects an error where the oracle succeeded, and the reverse", func() {
		ok, msg := compare.Errors(nil, zero)
		Expect(ok).To(BeFalse())
		Expect(msg).To(Equal(`the oracle succeeded but the executor failed: [division by zero] "score: CheckedRem: division by zero (round_idx + phase=3) at s.rx:9:6"`))
		ok, msg = compare.Errors(zero, nil)
		Expect(ok).To(BeFalse())
		Expect(msg).To(HavePrefix("the oracle failed with [division by zero]"))
	})
	It("rejects a different kind", func() {
		ok, msg := compare.Errors(zero, ir.CheckedError(site, 3, -1))
		Expect(ok).To(BeFalse())
		Expect(msg).To(HavePrefix("error kind differs: want [division by zero]"))
		Expect(msg).To(ContainSubstring("got [integer overflow]"))
	})
	It("rejects the same kind with a different message", func() {
		ok, msg := compare.Errors(zero, ir.CheckedError(site, 4, 0))
		Expect(ok).To(BeFalse())
		Expect(msg).To(HavePrefix(`error message differs (kind "division by zero")`))
	})
	It("classifies plain errors by the sentinels", func() {
		ok, _ := compare.Errors(fmt.Errorf("x: %w", ir.ErrShape), fmt.Errorf("x: %w", ir.ErrShape))
		Expect(ok).To(BeTrue())
		ok, msg := compare.Errors(errors.New("boom"), fmt.Errorf("boom: %w", ir.ErrShape))
		Expect(ok).To(BeFalse())
		Expect(msg).To(ContainSubstring("[unclassified]"))
	})
	It("quotes a multi-line error's first line and indents the rest unescaped", func() {
		crash := errors.New("native crashed: signal SIGSEGV\nworker stderr (tail):\nSIGSEGV: segmentation violation\n")
		ok, msg := compare.Errors(nil, crash)
		Expect(ok).To(BeFalse())
		Expect(msg).To(Equal("the oracle succeeded but the executor failed: [unclassified] \"native crashed: signal SIGSEGV\"\n" +
			"    worker stderr (tail):\n    SIGSEGV: segmentation violation"))
		_, msg = compare.Errors(nil, errors.New("native crashed: signal SIGSEGV\n"))
		Expect(msg).To(HaveSuffix(`[unclassified] "native crashed: signal SIGSEGV"`))
	})
})
