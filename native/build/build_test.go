package build_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native/build"
	"github.com/rextio/rxeq/native/runtime"
)

// unit is a hand-written translation unit of the shape generated code has:
// it includes the runtime header and defines one function.
const unit = `#include "rx_runtime.h"
int rx_fn_f(const rx_arg *rx_args, rx_status *rx_st);
int rx_fn_f(const rx_arg *rx_args, rx_status *rx_st)
{
	(void)rx_args;
	(void)rx_st;
	return 0;
}
`

// cc resolves the local C compiler, or skips the spec.
func cc(ctx context.Context) *build.Compiler {
	GinkgoHelper()
	if _, err := exec.LookPath("cc"); err != nil {
		Skip("no C compiler: " + err.Error())
	}
	c, err := build.FindCompiler(ctx, "", 0, "")
	Expect(err).NotTo(HaveOccurred())
	return c
}

var _ = Describe("compilers", func() {
	ctx := context.Background()

	It("says the compiler is missing and names CC", func() {
		_, err := build.FindCompiler(ctx, "/nonexistent/bin/rxeq-cc", 0, "")
		Expect(err).To(MatchError(build.ErrCompiler))
		Expect(err.Error()).To(ContainSubstring(`no C compiler: CC="/nonexistent/bin/rxeq-cc" not found`))
		_, err = build.FindCXX(ctx, "/nonexistent/bin/rxeq-cxx", 0)
		Expect(err).To(MatchError(build.ErrCompiler))
		Expect(err.Error()).To(ContainSubstring("the torch runtime needs a C++17 compiler"))
	})

	It("remembers a compiler's identity in the memo directory", func() {
		c := cc(ctx)
		Expect(c.FirstLine()).NotTo(BeEmpty())
		memo := GinkgoT().TempDir()
		m, err := build.FindCompiler(ctx, "cc", 0, memo)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.FirstLine()).To(Equal(c.FirstLine()))
		ids, err := filepath.Glob(filepath.Join(memo, "cc-*.id"))
		Expect(err).NotTo(HaveOccurred())
		Expect(ids).To(HaveLen(1))
	})

	It("gives a copy of the flags", func() {
		f := build.Flags()
		Expect(f).To(ContainElements("-std=c11", "-ffp-contract=off", "-Werror"))
		f[0] = "changed"
		Expect(build.Flags()[0]).To(Equal("-std=c11"))
	})
})

var _ = Describe("cache directory", func() {
	It("is created private, and refused when group or others can write it", func() {
		dir := filepath.Join(GinkgoT().TempDir(), "cache")
		got, err := build.CacheDir(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(dir))
		fi, err := os.Stat(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o700)))
		Expect(os.Chmod(dir, 0o777)).To(Succeed())
		_, err = build.CacheDir(dir)
		Expect(err).To(MatchError(build.ErrCache))
		Expect(err.Error()).To(ContainSubstring("group or others"))
	})

	It("defaults to the user's cache directory", func() {
		d, err := build.DefaultCacheDir("")
		Expect(err).NotTo(HaveOccurred())
		Expect(filepath.Base(d)).To(Equal("rxeq"))
		Expect(build.DefaultCacheDir("/x/y")).To(Equal("/x/y"))
	})

	It("puts scratch caches in $TMPDIR when it is set", func() {
		dir := GinkgoT().TempDir()
		GinkgoT().Setenv("TMPDIR", dir)
		Expect(build.ScratchDir()).To(Equal(dir))
	})
})

var _ = Describe("builds", Ordered, Label("native"), func() {
	ctx := context.Background()
	var tc *build.Toolchain

	// The runtime library is built once, into a cache of its own; each
	// spec builds its programs into a fresh one.
	BeforeAll(func() {
		c := cc(ctx)
		dir, err := build.CacheDir(filepath.Join(GinkgoT().TempDir(), "rt"))
		Expect(err).NotTo(HaveOccurred())
		rt := runtime.Native()
		if !c.HasLib(ctx, "libsleef.so", 0) {
			rt = rt.WithoutSLEEF()
		}
		Expect(build.RuntimeBuilt(rt, c, dir)).To(BeFalse())
		rtPath, rtKey, err := build.BuildRuntime(ctx, rt, c, dir, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(build.RuntimeBuilt(rt, c, dir)).To(BeTrue())
		Expect(filepath.Base(rtPath)).To(Equal("rt-" + rtKey + ".so"))
		tc = &build.Toolchain{CC: c, RuntimePath: rtPath, RuntimeKey: rtKey}
	})

	BeforeEach(func() {
		dir, err := build.CacheDir(filepath.Join(GinkgoT().TempDir(), "cache"))
		Expect(err).NotTo(HaveOccurred())
		tc.Dir = dir
	})

	It("builds a program once, then finds it in the cache, and rebuilds a corrupt one", func() {
		cold, cached, err := tc.Program(ctx, []byte(unit))
		Expect(err).NotTo(HaveOccurred())
		Expect(cached).To(BeFalse())
		Expect(filepath.Dir(cold)).To(Equal(tc.Dir))
		warm, cached, err := tc.Program(ctx, []byte(unit))
		Expect(err).NotTo(HaveOccurred())
		Expect(cached).To(BeTrue())
		Expect(warm).To(Equal(cold))
		Expect(os.Truncate(cold, 100)).To(Succeed())
		again, cached, err := tc.Program(ctx, []byte(unit))
		Expect(err).NotTo(HaveOccurred())
		Expect(cached).To(BeFalse())
		Expect(again).To(Equal(cold))
	})

	It("reports a compile failure with the compiler's stderr and the source's path", func() {
		_, _, err := tc.Program(ctx, []byte(unit+"int broken(void) { return undeclared; }\n"))
		Expect(err).To(MatchError(build.ErrCompiler))
		Expect(err.Error()).To(ContainSubstring("undeclared"))
		path := strings.TrimSuffix(strings.Fields(strings.SplitN(err.Error(), " failed on ", 2)[1])[0], ":")
		Expect(filepath.Base(path)).To(Equal(build.GeneratedFile))
		Expect(path).To(BeAnExistingFile())
	})

	It("builds a batch whose members define the same function, renamed", func() {
		srcs := [][]byte{[]byte(unit), []byte(unit)}
		renames := []map[string]string{{"rx_fn_f": "rx_b0_rx_fn_f"}, {"rx_fn_f": "rx_b1_rx_fn_f"}}
		lib, cached, err := tc.Batch(ctx, srcs, renames)
		Expect(err).NotTo(HaveOccurred())
		Expect(cached).To(BeFalse())
		Expect(filepath.Base(lib)).To(HavePrefix("batch-"))
		again, cached, err := tc.Batch(ctx, srcs, renames)
		Expect(err).NotTo(HaveOccurred())
		Expect(cached).To(BeTrue())
		Expect(again).To(Equal(lib))
	})
})
