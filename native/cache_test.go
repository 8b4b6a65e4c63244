//go:build cgo

package native_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("build cache", Label("native"), func() {
	var p *ir.Program
	var dir string
	ctx := context.Background()

	BeforeEach(func() {
		_, p = parse("boundary.rx", readTestdata("boundary.rx"))
		dir = filepath.Join(GinkgoT().TempDir(), "cache")
	})

	// build compiles p into the spec's own cache. The runtime library
	// comes from the suite's cache (Options.RuntimeCacheDir), where it is
	// built once, unless the spec names its own compiler: these specs are
	// about the program's entries, and a runtime built again in every
	// spec's directory cost some 5 s of CPU each. The specs below that
	// build into a fresh directory without RuntimeCacheDir, "reads no
	// environment variable" and "lets goroutines and processes build the
	// same program at once", still build the runtime into it.
	build := func(opts native.Options) (*native.Program, error) {
		if opts.CacheDir == "" {
			opts.CacheDir = dir
		}
		if opts.RuntimeCacheDir == "" && opts.CC == "" {
			opts.RuntimeCacheDir = suiteCache
		}
		prog, err := native.Compile(ctx, p, opts)
		if err == nil {
			DeferCleanup(prog.Close)
		}
		return prog, err
	}

	It("builds once, then loads from a private directory", func() {
		cold, err := build(native.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(cold.Info().Cached).To(BeFalse())
		Expect(cold.Info().Compiler).NotTo(BeEmpty())
		warm, err := build(native.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(warm.Info().Cached).To(BeTrue())
		Expect(warm.Info().Library).To(Equal(cold.Info().Library))
		fi, err := os.Stat(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o700)))
		Expect(filepath.Dir(warm.Info().Library)).To(Equal(dir))
	})

	It("reads no environment variable: $RXEQ_CACHE and $CC are the rxeq command's to apply", func() {
		GinkgoT().Setenv("RXEQ_CACHE", dir)
		GinkgoT().Setenv("CC", "/nonexistent/bin/rxeq-cc")
		other := GinkgoT().TempDir()
		prog, err := native.Compile(ctx, p, native.Options{CacheDir: other})
		Expect(err).NotTo(HaveOccurred())
		defer prog.Close()
		Expect(filepath.Dir(prog.Info().Library)).To(Equal(other))
	})

	It("refuses a directory that group or others can write", func() {
		Expect(os.MkdirAll(dir, 0o700)).To(Succeed())
		Expect(os.Chmod(dir, 0o777)).To(Succeed())
		_, err := build(native.Options{})
		Expect(err).To(MatchError(native.ErrCache))
		Expect(err.Error()).To(ContainSubstring("group or others"))
		Expect(err.Error()).To(ContainSubstring(dir))
		Expect(os.Chmod(dir, 0o720)).To(Succeed())
		_, err = build(native.Options{})
		Expect(err).To(MatchError(native.ErrCache))
	})

	It("refuses a directory owned by another user", func() {
		if os.Getuid() != 0 {
			Skip("needs root to chown")
		}
		Expect(os.MkdirAll(dir, 0o700)).To(Succeed())
		Expect(os.Chown(dir, 12345, 12345)).To(Succeed())
		_, err := build(native.Options{})
		Expect(err).To(MatchError(native.ErrCache))
		Expect(err.Error()).To(ContainSubstring("not by the current user"))
	})

	DescribeTable("detects a corrupt cached object and rebuilds it",
		func(corrupt func(path string)) {
			first, err := build(native.Options{})
			Expect(err).NotTo(HaveOccurred())
			lib := first.Info().Library
			Expect(first.Close()).To(Succeed())
			corrupt(lib)
			again, err := build(native.Options{})
			Expect(err).NotTo(HaveOccurred())
			Expect(again.Info().Cached).To(BeFalse())
			run(again, "two", boundaryInputs())
		},
		Entry("truncated", func(path string) { Expect(os.Truncate(path, 100)).To(Succeed()) }),
		Entry("same size, different bytes", func(path string) {
			b, err := os.ReadFile(path)
			Expect(err).NotTo(HaveOccurred())
			b[len(b)/2] ^= 0xff
			Expect(os.WriteFile(path, b, 0o700)).To(Succeed())
		}),
		Entry("checksum missing", func(path string) { Expect(os.Remove(strings.TrimSuffix(path, ".so") + ".sum")).To(Succeed()) }),
	)

	It("reports a compile failure with the compiler's stderr and the generated file's path", func() {
		_, err := build(native.Options{CC: "cc -Wmissing-prototypes"})
		Expect(err).To(MatchError(native.ErrCompiler))
		Expect(err.Error()).To(ContainSubstring("no previous prototype for 'rx_fn_two'"))
		Expect(err.Error()).To(ContainSubstring(`CC="cc -Wmissing-prototypes"`))
		path := strings.Fields(strings.SplitN(err.Error(), " failed on ", 2)[1])[0]
		Expect(path).To(HaveSuffix(":"))
		path = strings.TrimSuffix(path, ":")
		Expect(path).To(HaveSuffix(native.GeneratedFile))
		Expect(path).To(BeAnExistingFile())
		src, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		gen, err := native.Generate(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(src).To(Equal(gen))
	})

	It("says the compiler is missing and names CC", func() {
		_, err := build(native.Options{CC: "/nonexistent/bin/rxeq-cc"})
		Expect(err).To(MatchError(native.ErrCompiler))
		Expect(err.Error()).To(ContainSubstring(`no C compiler: CC="/nonexistent/bin/rxeq-cc" not found`))
		GinkgoT().Setenv("PATH", GinkgoT().TempDir())
		GinkgoT().Setenv("CC", "")
		_, err = build(native.Options{})
		Expect(err).To(MatchError(native.ErrCompiler))
		Expect(err.Error()).To(ContainSubstring(`CC="cc" not found`))
	})

	It("lets goroutines and processes build the same program at once", func() {
		exe, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())
		var cmds []*exec.Cmd
		var outs []*strings.Builder
		for range 2 {
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), helperEnv+"=build", "RXEQ_CACHE="+dir)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			Expect(cmd.Start()).To(Succeed())
			cmds, outs = append(cmds, cmd), append(outs, &out)
		}
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				prog, err := native.Compile(ctx, p, native.Options{CacheDir: dir})
				errs[i] = err
				if err == nil {
					_, errs[i] = prog.Run(ctx, "two", boundaryInputs())
					prog.Close()
				}
			}()
		}
		wg.Wait()
		for i, cmd := range cmds {
			Expect(cmd.Wait()).To(Succeed(), outs[i].String())
			Expect(outs[i].String()).To(Equal("ok\n"))
		}
		for _, err := range errs {
			Expect(err).NotTo(HaveOccurred())
		}
	})
})

var _ = Describe("ScratchDir", Label("native"), func() {
	// native/build's specs hold that it is $TMPDIR when that is set.
	It("is otherwise a directory where libraries can be built and loaded", func() {
		GinkgoT().Setenv("TMPDIR", "")
		d := native.ScratchDir()
		if runtime.GOOS == "linux" {
			var st syscall.Statfs_t
			if syscall.Statfs("/dev/shm", &st) == nil && st.Type == 0x01021994 && st.Flags&(0x1|0x8) == 0 {
				Expect(d).To(Equal("/dev/shm"))
			}
		}
		cache, err := os.MkdirTemp(d, "rxeq-scratch-test-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, cache)
		_, p := parse("s.rx", "package p\n\nfunc f(x [B][2]float32) (y [B][2]float32) {\n\ty = Tanh(x)\n\treturn\n}\n")
		prog, err := native.Compile(context.Background(), p, native.Options{CacheDir: cache, RuntimeCacheDir: suiteCache})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(prog.Close)
		out := run(prog, "f", map[string]*tensor.Tensor{"x": tensor.FromFloat32([]float32{0, 1}, 1, 2)})
		Expect(out["y"].F32[1]).To(BeNumerically("~", 0.7615942, 1e-6))
	})
})
