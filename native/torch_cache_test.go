//go:build cgo

package native_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/native/runtime"
	"github.com/rextio/rxeq/tensor"
)

var _ = Describe("the torch runtime's build", Label("native", "torch"), func() {
	ctx := context.Background()

	It("is compiled once into the cache and shared by every program", func() {
		needTorch()
		_, p1 := parse("score_linear.rx", readTestdata("score_linear.rx"))
		_, p2 := parse("ops.rx", readTestdata("ops.rx"))
		a, b := compileTorch(p1), compileTorch(p2)
		Expect(a.Info().Runtime).To(Equal(b.Info().Runtime))
		Expect(filepath.Base(a.Info().Runtime)).To(HavePrefix("rt-"))
		Expect(a.Info().Runtime).To(BeAnExistingFile())
		Expect(a.Info().Library).NotTo(Equal(b.Info().Library))
		entries, err := os.ReadDir(suiteCache)
		Expect(err).NotTo(HaveOccurred())
		srcs := 0
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), "rt-src-") {
				if _, err := os.Stat(filepath.Join(suiteCache, e.Name(), "rx_aten.cc")); err == nil {
					srcs++
				}
			}
		}
		Expect(srcs).To(Equal(1), "one torch runtime build in the suite cache")
	})

	It("is keyed by its source, the C++ compiler's flags and the libtorch version", func() {
		needTorch()
		lib, err := runtime.Torch("")
		Expect(err).NotTo(HaveOccurred())
		key := func(opts native.Options, l runtime.Lib) string {
			k, err := native.TorchRuntimeKey(ctx, opts, l)
			Expect(err).NotTo(HaveOccurred())
			return k
		}
		base := key(native.Options{}, lib)
		Expect(key(native.Options{}, lib)).To(Equal(base))
		other := lib
		other.Version += " (rebuilt)"
		Expect(key(native.Options{}, other)).NotTo(Equal(base))
		Expect(key(native.Options{CXX: "c++ -DRX_TEST"}, lib)).NotTo(Equal(base))
		other = lib
		other.Files = append([]runtime.File(nil), lib.Files...)
		other.Files[len(other.Files)-1].Text += "\n"
		Expect(key(native.Options{}, other)).NotTo(Equal(base))
		Expect(lib.Version).To(MatchRegexp(`^libtorch \d+\.\d+`))
	})

	It("computes the same with two intra-op threads, then goes back to one", func() {
		needTorch()
		_, p := parse("score_linear.rx", readTestdata("score_linear.rx"))
		in := map[string]*tensor.Tensor{
			"x": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 1}, 1, 4096, 32),
			"w": tensor.Generate(tensor.Dist{Kind: tensor.Normal, B: 0.3}, 2, 32, 8),
			"b": tensor.Generate(tensor.Dist{Kind: tensor.Uniform, A: -0.1, B: 0.1}, 3, 8),
		}
		one := runTorch(compileTorch(p), "score_linear", in)
		two, err := native.Compile(ctx, p, native.Options{CacheDir: suiteCache, Runtime: executor.Torch, TorchThreads: 2})
		Expect(err).NotTo(HaveOccurred())
		defer two.Close()
		got := runTorch(two, "score_linear", in)
		Expect(got["classes"].I64).To(Equal(one["classes"].I64))
		for i, v := range one["probs"].F32 {
			Expect(got["probs"].F32[i]).To(BeNumerically("~", v, 1e-6))
		}
		back, err := native.Compile(ctx, p, native.Options{CacheDir: suiteCache, Runtime: executor.Torch})
		Expect(err).NotTo(HaveOccurred())
		Expect(back.Close()).To(Succeed())
	})
})
