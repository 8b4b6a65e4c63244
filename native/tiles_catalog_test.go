//go:build cgo

package native_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/scenarios"
)

var _ = Describe("the catalog's row-tiles scenario", Label("native"), func() {
	BeforeEach(func() {
		if err := native.Available(); err != nil {
			Skip(err.Error())
		}
	})

	It("runs each row-separable function in tiles of 64 and each op across the batch in one pass, with the untiled bits", func() {
		f, err := scenarios.Lookup("tiles.rx")
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		tiled, untiled := compileTiled(p, 64), compileTiled(p, -1)
		Expect(f.Batches).To(ContainElement(200))
		for _, fn := range f.Funcs {
			in, err := harness.GenerateInputs(f, fn, 200, f.Seed, nil)
			Expect(err).NotTo(HaveOccurred())
			got, n, err := invocations(tiled, fn.Name, in)
			Expect(err).NotTo(HaveOccurred(), fn.Name)
			want, one, err := invocations(untiled, fn.Name, in)
			Expect(err).NotTo(HaveOccurred(), fn.Name)
			Expect(one).To(Equal(int64(1)), fn.Name)
			switch {
			case strings.HasPrefix(fn.Name, "rows_"):
				Expect(n).To(Equal(int64(4)), "%s: 200 rows in tiles of 64, 64, 64 and 8", fn.Name)
			case strings.HasPrefix(fn.Name, "batch_"):
				Expect(n).To(Equal(int64(1)), "%s mixes rows: it must never be tiled", fn.Name)
			default:
				Fail("a function of tiles.rx is named rows_ or batch_: " + fn.Name)
			}
			sameOutputBits(got, want)
		}
	})
})
