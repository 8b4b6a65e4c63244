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
		h, err := os.ReadFile(runtime.HeaderName)
		Expect(err).NotTo(HaveOccurred())
		c, err := os.ReadFile(runtime.SourceName)
		Expect(err).NotTo(HaveOccurred())
		Expect(runtime.Header()).To(Equal(string(h)))
		Expect(runtime.Source()).To(Equal(string(c)))
		Expect(runtime.Source()).To(ContainSubstring(`#include "` + runtime.HeaderName + `"`))
	})

	It("compiles standalone as C11 with every warning an error", func() {
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, runtime.HeaderName), []byte(runtime.Header()), 0o600)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, runtime.SourceName), []byte(runtime.Source()), 0o600)).To(Succeed())
		cc := compiler()
		if _, err := exec.LookPath(cc[0]); err != nil {
			Fail("no C compiler (" + cc[0] + "; set CC): " + err.Error())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		args := append(cc[1:], "-std=c11", "-fsyntax-only", "-Wall", "-Werror", runtime.SourceName)
		cmd := exec.CommandContext(ctx, cc[0], args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Expect(string(out)).To(BeEmpty())
	})
})
