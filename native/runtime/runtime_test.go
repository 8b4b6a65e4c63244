package runtime_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native/runtime"
)

// compiler returns $CC split on spaces, or cc.
func compiler() []string {
	if cc := strings.Fields(os.Getenv("CC")); len(cc) > 0 {
		return cc
	}
	return []string{"cc"}
}

var _ = Describe("embedded runtime", Label("native"), func() {
	It("embeds exactly the files on disk", func() {
		lib := runtime.Native()
		Expect(lib.Files).NotTo(BeEmpty())
		for _, f := range lib.Files {
			disk, err := os.ReadFile(filepath.Join("csrc", f.Name))
			Expect(err).NotTo(HaveOccurred())
			Expect(f.Text).To(Equal(string(disk)), f.Name)
		}
		Expect(lib.Files[0].Name).To(Equal(runtime.HeaderName))
		Expect(runtime.Header()).To(Equal(lib.Files[0].Text))
		for _, c := range lib.CSources {
			Expect(lib.Files).To(ContainElement(HaveField("Name", c)))
		}
	})

	It("compiles standalone as C11 with every warning an error", func() {
		dir := GinkgoT().TempDir()
		lib := runtime.Native()
		for _, f := range lib.Files {
			Expect(os.WriteFile(filepath.Join(dir, f.Name), []byte(f.Text), 0o600)).To(Succeed())
		}
		cc := compiler()
		if _, err := exec.LookPath(cc[0]); err != nil {
			Fail("no C compiler (" + cc[0] + "; set CC): " + err.Error())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		args := append(append(cc[1:], "-std=c11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror"), append(lib.Args, lib.CSources...)...)
		cmd := exec.CommandContext(ctx, cc[0], args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Expect(string(out)).To(BeEmpty())
	})

	It("keeps the header's API free of anything but declarations a generated file needs", func() {
		h := runtime.Header()
		Expect(h).To(ContainSubstring(`extern "C"`), "the C++ runtime includes it too")
		Expect(h).NotTo(ContainSubstring("#include <math.h>"), "generated code must not see libm's macros")
	})
})
