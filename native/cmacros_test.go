package native_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/native/internal/cmacros"
	"github.com/rextio/rxeq/tensor"
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
	names, err := cmacros.Defined(context.Background(), cc, native.Flags(), cmacros.Native())
	Expect(err).NotTo(HaveOccurred())
	return names
}

var _ = Describe("C macro names", Label("native"), func() {
	// Every listed name (and every one the local compiler defines) plays
	// every role a program name can have in C: constant, function,
	// float32 and int64 parameter, float32 and int64 local, loop index,
	// float32 and int64 result. Names go in groups of nine, one function
	// per group; program r rotates the roles by r, so nine programs (nine
	// C compiles) give each name each role once.
	It("compiles and runs every macro name as every kind of identifier", func() {
		names := native.CMacroNames()
		// The local compiler's and a few hand-listed libc names too.
		for _, n := range append(localMacros(), "errno", "NULL", "EOF", "assert", "offsetof", "stdin") {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		const roles = 9
		for len(names)%roles != 0 {
			names = append(names, fmt.Sprintf("pad%d", len(names)))
		}
		for r := range roles {
			var b strings.Builder
			b.WriteString("//rx:scenario macro-names\npackage m\n")
			var funcs []string
			for g := 0; g < len(names); g += roles {
				n := func(role int) string { return names[g+(role+r)%roles] }
				c, f, pf, pi, lf, li, ix, rf, ri := n(0), n(1), n(2), n(3), n(4), n(5), n(6), n(7), n(8)
				fmt.Fprintf(&b, "\nconst %s = 3\n\nfunc %s(%s [2]float32, %s int64) (%s [2]float32, %s int64) {\n", c, f, pf, pi, rf, ri)
				fmt.Fprintf(&b, "\t%s := %s * 2.0\n\t%s := %s + %s\n", lf, pf, li, pi, c)
				fmt.Fprintf(&b, "\tfor %s := range %s {\n\t\t%s = %s + 1.0\n\t\t%s = %s + %s\n\t}\n", ix, pi, lf, lf, li, li, ix)
				fmt.Fprintf(&b, "\t%s = %s\n\t%s = %s\n\treturn\n}\n", rf, lf, ri, li)
				funcs = append(funcs, f)
			}
			src := b.String()
			_, p := parse(fmt.Sprintf("macro_names_%d.rx", r), src)
			prog := compile(p)
			for i, f := range funcs {
				pf, pi := names[i*roles+(2+r)%roles], names[i*roles+(3+r)%roles]
				rf, ri := names[i*roles+(7+r)%roles], names[i*roles+(8+r)%roles]
				out := run(prog, f, map[string]*tensor.Tensor{pf: f32(sh(2), 1, 2), pi: tensor.Scalar(3)})
				// (x·2 + 3 ones) and 3 + 3 + (0 + 1 + 2).
				Expect(out[rf].F32).To(Equal([]float32{5, 7}), "rotation %d, function %s", r, f)
				Expect(out[ri].I64).To(Equal([]int64{9}), "rotation %d, function %s", r, f)
			}
		}
	})

	It("compiles the reproducer of the issue", func() {
		src, err := os.ReadFile("testdata/macro_names.rx")
		Expect(err).NotTo(HaveOccurred())
		_, p := parse("macro_names.rx", string(src))
		prog := compile(p)
		out := run(prog, "EXIT_SUCCESS", map[string]*tensor.Tensor{"SIZE_MAX": f32(sh(1, 2), 1, 2), "RAND_MAX": tensor.Scalar(3)})
		Expect(out["errno"].F32).To(Equal([]float32{5, 7}))
		Expect(out["NAN"].I64).To(Equal([]int64{8}))
	})
})
