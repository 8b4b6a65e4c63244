package cgen_test

import (
	"context"
	"os"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native/build"
	"github.com/rextio/rxeq/native/cgen"
	"github.com/rextio/rxeq/native/internal/cmacros"
)

// localMacros are the macros the local compiler ($CC, default cc)
// defines for generated C, with the backend's own flags; the spec skips
// itself when there is no compiler.
func localMacros() []string {
	GinkgoHelper()
	cc, err := cmacros.LocalCC(os.Getenv("CC"))
	if err != nil {
		Skip(err.Error())
	}
	names, err := cmacros.Defined(context.Background(), cc, build.Flags(), cmacros.Native())
	Expect(err).NotTo(HaveOccurred())
	return names
}

var _ = Describe("C macro names", Label("native"), func() {
	It("has every macro the local compiler defines for generated C in the committed list", func() {
		names := localMacros()
		Expect(len(names)).To(BeNumerically(">", 50), "the probe found too few macros: %v", names)
		list := cgen.MacroNames()
		Expect(slices.IsSorted(list)).To(BeTrue(), "cmacros_gen.go is not sorted")
		var missing []string
		for _, n := range names {
			if _, ok := slices.BinarySearch(list, n); !ok {
				missing = append(missing, n)
			}
			if cgen.Mangle(n) == n {
				missing = append(missing, n+" (kept by Mangle)")
			}
		}
		Expect(missing).To(BeEmpty(), "the local compiler defines macros that cmacros_gen.go lacks; run go generate ./native/cgen")
	})

	It("keeps the names the issue found out of the C file", func() {
		for _, n := range []string{"EXIT_SUCCESS", "EXIT_FAILURE", "SIZE_MAX", "RAND_MAX", "INT32_MAX", "UINT8_MAX",
			"errno", "math_errhandling", "NAN", "INFINITY", "M_PI", "FP_NAN", "MB_CUR_MAX", "true", "bool", "linux"} {
			Expect(cgen.Mangle(n)).To(Equal("rx_u_"+strings.ReplaceAll(n, "_", "__")), n)
		}
		Expect(cgen.Mangle("score")).To(Equal("score"))
		Expect(cgen.Mangle("EXIT_SOMETIMES")).To(Equal("EXIT_SOMETIMES"))
	})

})
