package isolate_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/isolate"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
)

// atenTanh is libtorch 1.13's at::_ops::tanh_out::call, the symbol the
// torch runtime's Tanh calls.
const atenTanh = "_ZN2at4_ops8tanh_out4callERKNS_6TensorERS2_"

var _ = Describe("the isolated torch executor", Label("native", "torch"), func() {
	It("is named torch, and a crash inside an ATen call fails that function's cases only", func() {
		needCC()
		if err := builtin.Available(executor.Torch); err != nil {
			if os.Getenv("RXEQ_REQUIRE_TORCH") != "" {
				Fail("libtorch is required here (RXEQ_REQUIRE_TORCH is set) but: " + err.Error())
			}
			Skip("the torch executor needs libtorch, which this machine lacks: " + err.Error())
		}
		obj := filepath.Join(GinkgoT().TempDir(), "fault_aten_segv.o")
		out, err := exec.Command("cc", "-c", "-fPIC", "-O0", "-o", obj, "testdata/fault_aten_segv.c").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		// The fault is linked into the torch runtime through CXX (part of
		// its cache key, so it never replaces a normal runtime).
		e := isolate.Executor{
			Options: native.Options{Runtime: executor.Torch, CXX: "c++ -Wl,--wrap=" + atenTanh + " " + obj, CacheDir: cacheDir},
			Command: []string{self},
			Env:     []string{workerEnv},
		}
		Expect(e.Name()).To(Equal(executor.Name("torch")))

		f, _ := load("testdata/two.rx")
		opts := harness.Options{Executors: []executor.Executor{fallback.Executor{}, e}, SkipLocks: true}
		res, err := harness.Run(context.Background(), []*program.File{f}, opts)
		Expect(err).NotTo(HaveOccurred())
		seen := map[string]int{}
		for _, c := range res.Cases {
			key := c.Function + "/" + string(c.Executor)
			seen[key]++
			if key == "squash/torch" {
				Expect(c.Status).NotTo(Equal(harness.StatusPass), c.Name())
				Expect(c.Message).To(ContainSubstring(`"torch crashed: signal SIGSEGV`), c.Name())
				Expect(c.Message).NotTo(ContainSubstring("native crashed"), c.Name())
				Expect(c.Path).To(Equal(executor.Name("torch")))
				continue
			}
			Expect(c.Status).To(Equal(harness.StatusPass), "%s: %s", c.Name(), c.Message)
		}
		Expect(seen).To(Equal(map[string]int{"squash/oracle": 2, "squash/fallback": 2, "squash/torch": 2,
			"plain/oracle": 2, "plain/fallback": 2, "plain/torch": 2}))
		for _, c := range res.Cases {
			if c.Executor == "torch" && c.Status == harness.StatusPass {
				Expect(c.Path).To(Equal(executor.Name("torch")))
			}
		}
	})
})
