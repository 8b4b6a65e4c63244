package ident_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/internal/ident"
)

var _ = Describe("Namer", func() {
	n := ident.New("for if\n  tf   sum")

	It("keeps a safe identifier that is not reserved", func() {
		for _, s := range []string{"x", "logits", "w1", "round_idx", "B"} {
			Expect(n.Name(s)).To(Equal(s))
		}
	})

	It("encodes a reserved word, a name starting with rx_ or _, and a non-ASCII name", func() {
		Expect(n.Reserved("tf")).To(BeTrue())
		Expect(n.Reserved("x")).To(BeFalse())
		Expect(n.Name("for")).To(Equal("rx_for"))
		Expect(n.Name("sum")).To(Equal("rx_sum"))
		Expect(n.Name("rx_a")).To(Equal("rx_rx__a"))
		Expect(n.Name("_a")).To(Equal("rx___a"))
		Expect(n.Name("größe")).To(Equal("rx_gr_f6__df_e"))
		Expect(n.Name("")).To(Equal("rx_"))
	})

	It("never maps two names to one identifier", func() {
		names := []string{"a", "a_", "a__", "rx_a", "rx__a", "_a", "for", "rx_for", "é", "_e9_", "rx__e9_", "a1", "a_1", "1a"}
		seen := map[string]string{}
		for _, s := range names {
			id := n.Name(s)
			Expect(seen).NotTo(HaveKey(id), "%q and %q both give %q", seen[id], s, id)
			seen[id] = s
		}
	})
})
