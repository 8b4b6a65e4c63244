package ledger_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/ledger"
	"github.com/rextio/rxeq/program"
)

var _ = Describe("the checked-in ledger", func() {
	It("parses, and every entry is documented in docs/findings.md and has a program that checks", func() {
		l := ledger.Default()
		Expect(l.Entries).NotTo(BeEmpty())
		doc, err := os.ReadFile(filepath.Join("..", "docs", "findings.md"))
		Expect(err).NotTo(HaveOccurred())
		for _, e := range l.Entries {
			Expect(string(doc)).To(ContainSubstring("`"+e.ID+"`"), "entry %s is not in docs/findings.md", e.ID)
			Expect(e.Explanation).NotTo(BeEmpty())
			if e.Program == "" {
				continue
			}
			src, err := ledger.DefaultProgram(e.Program)
			Expect(err).NotTo(HaveOccurred(), e.ID)
			_, err = program.Parse(e.Program, src)
			Expect(err).NotTo(HaveOccurred(), e.ID)
		}
		Expect(l.Match(ledger.Case{Executor: "torch", Version: "1.13.1", Category: "signed-zero", Ops: []string{"Div", "Maximum"}, Values: "opposite-inf"}).ID).
			To(Equal("torch-maximum-signed-zero"))
	})
})

var _ = Describe("matching", func() {
	l, err := ledger.Parse([]byte(`{"schema": "rxeq.ledger/v1", "entries": [
		{"id": "a", "executor": "torch", "versions": ">=1.13 <2.0", "category": "signed-zero",
		 "match": {"ops": ["Maximum", "Minimum"], "values": ["opposite-inf"]}, "explanation": "why", "upstream": "https://example.org/1"}]}`))

	It("needs the executor, a version in range, the category and every matcher field", func() {
		Expect(err).NotTo(HaveOccurred())
		ok := ledger.Case{Executor: "torch", Version: "1.13.1", Category: "signed-zero", Ops: []string{"Div", "Minimum"}, Values: "opposite-inf"}
		Expect(l.Match(ok)).NotTo(BeNil())
		Expect(l.Match(ok).Text()).To(Equal("a: why (https://example.org/1)"))
		for name, edit := range map[string]func(c *ledger.Case){
			"executor": func(c *ledger.Case) { c.Executor = "native" },
			"version":  func(c *ledger.Case) { c.Version = "2.1.0" },
			"old":      func(c *ledger.Case) { c.Version = "1.12.9" },
			"category": func(c *ledger.Case) { c.Category = "accuracy" },
			"ops":      func(c *ledger.Case) { c.Ops = []string{"Relu"} },
			"values":   func(c *ledger.Case) { c.Values = "finite" },
		} {
			c := ok
			edit(&c)
			Expect(l.Match(c)).To(BeNil(), name)
		}
		unknown := ok
		unknown.Version = ""
		Expect(l.Match(unknown)).NotTo(BeNil(), "an unknown version is in every range")
	})

	It("rejects a malformed ledger with ErrLedger and says why", func() {
		for text, why := range map[string]string{
			`{"schema": "other", "entries": []}`:                                                                             `schema "other"`,
			`{"schema": "rxeq.ledger/v1", "entries": [{"id": "x", "executor": "torch"}]}`:                                    "entry x: no explanation",
			`{"schema": "rxeq.ledger/v1", "entries": [{"id": "x", "executor": "t", "explanation": "e", "versions": "1.0"}]}`: `version bound "1.0"`,
			`{"schema": "rxeq.ledger/v1", "entries": [], "extra": 1}`:                                                        "unknown field",
		} {
			_, err := ledger.Parse([]byte(text))
			Expect(err).To(MatchError(ledger.ErrLedger), text)
			Expect(err.Error()).To(ContainSubstring(why))
		}
	})
})
