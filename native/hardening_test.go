//go:build cgo

package native_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// Issue 12: sizes that overflow, a cache planted with what rxeq must not
// read or include, and compilers that hang.
var _ = Describe("hostile shapes, caches and compilers", Label("native"), func() {
	ctx := context.Background()

	Describe("sizes that overflow int64", func() {
		// Zero-element inputs can carry huge dims: x is [2^33][0] and w is
		// [0][2^33], so MatMul(x, w) is [2^33][2^33], 2^66 elements.
		const src = `package ov

func big(x [B][K]float32, w [K][N]float32) (r float32) {
	r = Sum(Sum(MatMul(x, w), 1), 0)
	return
}

func wide(x [B][K]float32, w [K][N]float32) (r [B][N]float32) {
	r = MatMul(x, w)
	return
}
`
		huge := 1 << 33
		in := func() map[string]*tensor.Tensor {
			return map[string]*tensor.Tensor{
				"x": {DType: tensor.Float32, Shape: []int{huge, 0}, F32: []float32{}},
				"w": {DType: tensor.Float32, Shape: []int{0, huge}, F32: []float32{}},
			}
		}

		It("fails an intermediate's size in the C runtime with the shape error, not a crash", func() {
			_, p := parse("ov.rx", src)
			prog := compile(p)
			_, err := prog.Run(ctx, "big", in())
			Expect(err).To(MatchError(ir.ErrShape))
			var re *ir.RuntimeError
			Expect(errors.As(err, &re)).To(BeTrue())
			Expect(err.Error()).To(HavePrefix("big: the size of "))
			Expect(err.Error()).To(ContainSubstring("overflows int64"))
		})

		It("fails an output's size in Go before allocating it", func() {
			_, p := parse("ov.rx", src)
			prog := compile(p)
			_, err := prog.Run(ctx, "wide", in())
			Expect(err).To(MatchError(ir.ErrShape))
			Expect(err.Error()).To(Equal("wide: the size of output r [8589934592 8589934592] overflows int64: the shape is too large for any executor"))
		})
	})

	Describe("the build cache", func() {
		var p *ir.Program
		var dir string

		BeforeEach(func() {
			_, p = parse("boundary.rx", readTestdata("boundary.rx"))
			dir = filepath.Join(GinkgoT().TempDir(), "cache")
		})

		// build compiles p into the spec's own cache, with the runtime
		// library from the suite's (built once): what is planted below
		// is the program's entry, which a runtime built again in every
		// spec's directory did not make any harder to find.
		build := func(opts native.Options) (*native.Program, error) {
			opts.CacheDir = dir
			opts.RuntimeCacheDir = suiteCache
			prog, err := native.Compile(ctx, p, opts)
			if err == nil {
				DeferCleanup(prog.Close)
			}
			return prog, err
		}

		// plant builds once, replaces the program's library by what
		// replace makes, and builds again within a deadline.
		plant := func(replace func(lib string)) *native.Program {
			first, err := build(native.Options{})
			Expect(err).NotTo(HaveOccurred())
			lib := first.Info().Library
			Expect(first.Close()).To(Succeed())
			Expect(os.Remove(lib)).To(Succeed())
			replace(lib)
			done := make(chan *native.Program, 1)
			go func() {
				defer GinkgoRecover()
				again, err := build(native.Options{})
				Expect(err).NotTo(HaveOccurred())
				done <- again
			}()
			var again *native.Program
			Eventually(done).WithTimeout(time.Minute).Should(Receive(&again))
			return again
		}

		It("does not block on a FIFO planted as a cache entry: it rebuilds", func() {
			again := plant(func(lib string) { Expect(syscall.Mkfifo(lib, 0o600)).To(Succeed()) })
			Expect(again.Info().Cached).To(BeFalse())
			fi, err := os.Lstat(again.Info().Library)
			Expect(err).NotTo(HaveOccurred())
			Expect(fi.Mode().IsRegular()).To(BeTrue())
			run(again, "two", boundaryInputs())
		})

		It("does not follow a symlink planted as a cache entry: it rebuilds", func() {
			other := filepath.Join(GinkgoT().TempDir(), "elsewhere.so")
			Expect(os.WriteFile(other, []byte("not a library"), 0o700)).To(Succeed())
			again := plant(func(lib string) { Expect(os.Symlink(other, lib)).To(Succeed()) })
			Expect(again.Info().Cached).To(BeFalse())
			fi, err := os.Lstat(again.Info().Library)
			Expect(err).NotTo(HaveOccurred())
			Expect(fi.Mode().IsRegular()).To(BeTrue())
		})

		It("does not let a file in the source directory shadow a system header", func() {
			first, err := build(native.Options{})
			Expect(err).NotTo(HaveOccurred())
			lib := first.Info().Library
			Expect(first.Close()).To(Succeed())
			srcs, err := filepath.Glob(filepath.Join(dir, "*src-*"))
			Expect(err).NotTo(HaveOccurred())
			Expect(srcs).NotTo(BeEmpty())
			for _, sd := range srcs {
				for _, h := range []string{"stdint.h", "stdlib.h", "stdbool.h", "math.h", "string.h"} {
					Expect(os.WriteFile(filepath.Join(sd, h), []byte("#error planted header was included\n"), 0o600)).To(Succeed())
				}
			}
			Expect(os.Remove(lib)).To(Succeed())
			again, err := build(native.Options{})
			Expect(err).NotTo(HaveOccurred())
			Expect(again.Info().Cached).To(BeFalse())
			run(again, "two", boundaryInputs())
		})

		It("sweeps temporaries that a killed build left behind, and only old ones", func() {
			Expect(os.MkdirAll(dir, 0o700)).To(Succeed())
			old := filepath.Join(dir, ".tmp-123.so")
			fresh := filepath.Join(dir, ".tmp-456.so")
			for _, f := range []string{old, fresh} {
				Expect(os.WriteFile(f, []byte("half a library"), 0o600)).To(Succeed())
			}
			long := time.Now().Add(-2 * time.Hour)
			Expect(os.Chtimes(old, long, long)).To(Succeed())
			_, err := build(native.Options{})
			Expect(err).NotTo(HaveOccurred())
			Expect(old).NotTo(BeAnExistingFile())
			Expect(fresh).To(BeAnExistingFile())
		})
	})

	Describe("a compiler that hangs", func() {
		// hangingCC writes a compiler that answers --version and then, for a
		// build, starts a grandchild and sleeps; it writes the grandchild's
		// pid (into a file renamed into place, so the file is never seen
		// empty) so the test can see that it was killed with the group.
		hangingCC := func() (cc, pidFile string) {
			d := GinkgoT().TempDir()
			pidFile = filepath.Join(d, "grandchild.pid")
			cc = filepath.Join(d, "hang-cc")
			script := "#!/bin/sh\n" +
				"if [ \"$1\" = --version ]; then echo hang-cc 1.0; exit 0; fi\n" +
				"sleep 300 & echo $! > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "\n" +
				"wait\n"
			Expect(os.WriteFile(cc, []byte(script), 0o700)).To(Succeed())
			return cc, pidFile
		}
		alive := func(pidFile string) func() bool {
			return func() bool {
				b, err := os.ReadFile(pidFile)
				if err != nil {
					return true // not started yet
				}
				pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
				Expect(err).NotTo(HaveOccurred())
				// A zombie still answers kill 0; read its state.
				stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
				if err != nil {
					return false
				}
				f := strings.Fields(string(stat))
				return len(f) > 2 && f[2] != "Z"
			}
		}

		It("is killed with its children at the compile timeout, and the error says how to raise it", func() {
			cc, pidFile := hangingCC()
			_, p := parse("boundary.rx", readTestdata("boundary.rx"))
			start := time.Now()
			_, err := native.Compile(ctx, p, native.Options{CC: cc, CacheDir: GinkgoT().TempDir(), CompileTimeout: 500 * time.Millisecond})
			Expect(err).To(MatchError(native.ErrCompiler))
			Expect(err.Error()).To(ContainSubstring("compile timed out after 500ms"))
			Expect(err.Error()).To(ContainSubstring("--compile-timeout"))
			Expect(time.Since(start)).To(BeNumerically("<", time.Minute))
			Eventually(alive(pidFile)).WithTimeout(10 * time.Second).Should(BeFalse())
		})

		It("is killed with its children when the context is cancelled", func() {
			cc, pidFile := hangingCC()
			_, p := parse("boundary.rx", readTestdata("boundary.rx"))
			cctx, cancel := context.WithCancel(ctx)
			go func() {
				for {
					if _, err := os.Stat(pidFile); err == nil {
						cancel()
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}()
			_, err := native.Compile(cctx, p, native.Options{CC: cc, CacheDir: GinkgoT().TempDir()})
			Expect(err).To(MatchError(context.Canceled))
			Eventually(alive(pidFile)).WithTimeout(10 * time.Second).Should(BeFalse())
		})

		It("is killed when rxeq itself is killed", func() {
			if _, err := exec.LookPath("sh"); err != nil {
				Skip("no sh")
			}
			cc, pidFile := hangingCC()
			exe, err := os.Executable()
			Expect(err).NotTo(HaveOccurred())
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), helperEnv+"=build", "RXEQ_CACHE="+GinkgoT().TempDir(), "CC="+cc)
			Expect(cmd.Start()).To(Succeed())
			Eventually(func() error { _, err := os.Stat(pidFile); return err }).WithTimeout(30 * time.Second).Should(Succeed())
			DeferCleanup(func() {
				if b, err := os.ReadFile(pidFile); err == nil {
					if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			Expect(cmd.Process.Kill()).To(Succeed())
			_ = cmd.Wait()
			// The driver dies with rxeq (parent-death signal); its sleeping
			// child is then an orphan of the driver's group. The driver is
			// what holds the build; the grandchild here is a stand-in for
			// cc1, which exits when its pipe closes. So check the driver.
			Eventually(func() bool {
				out, _ := exec.Command("pgrep", "-f", cc).Output()
				return len(strings.TrimSpace(string(out))) > 0
			}).WithTimeout(10 * time.Second).Should(BeFalse())
		})
	})
})

var _ = Describe("a program too large for the C compiler", func() {
	It("is refused before the compiler runs, with the limit and what to do", func() {
		terms := make([]string, native.MaxFuncInstrs)
		for i := range terms {
			terms[i] = "Tanh(x)"
		}
		src := "package big\n\nfunc f(x [B][4]float32) (r [B][4]float32) {\n\tr = " + strings.Join(terms, " + ") + "\n\treturn\n}\n"
		_, p := parse("big.rx", src)
		_, err := native.Generate(p)
		Expect(err).To(MatchError(native.ErrTooLarge))
		Expect(err).To(MatchError(native.ErrUnsupported))
		Expect(err.Error()).To(MatchRegexp(`function f has \d+ instructions after lowering; the native backend compiles at most 2000 per function`))
		Expect(err.Error()).To(ContainSubstring("split the computation"))
		// Nothing was compiled: Compile fails the same way with a compiler
		// that would hang.
		_, err = native.Compile(context.Background(), p, native.Options{CC: "/nonexistent/cc", CacheDir: GinkgoT().TempDir()})
		Expect(err).To(MatchError(native.ErrTooLarge))
	})
})
