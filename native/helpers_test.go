package native_test

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// suiteCache is one private build cache shared by the suite, so that a
// program compiled twice is built once.
var suiteCache string

var _ = BeforeSuite(func() {
	dir, err := os.MkdirTemp("", "rxeq-native-test-")
	Expect(err).NotTo(HaveOccurred())
	suiteCache = filepath.Join(dir, "cache")
	DeferCleanup(os.RemoveAll, dir)
})

// parse checks and lowers .rx source.
func parse(name, src string) (*program.File, *ir.Program) {
	GinkgoHelper()
	f, err := program.Parse(name, []byte(src))
	Expect(err).NotTo(HaveOccurred())
	p, err := program.Lower(f)
	Expect(err).NotTo(HaveOccurred())
	return f, p
}

// compile builds p in forced mode through the suite cache; in a build
// without cgo it skips the spec with the reason.
func compile(p *ir.Program) *native.Program {
	GinkgoHelper()
	return compileISA(p, "")
}

// compileISA is compile with the kernels' ISA capped at isa ("" for the
// widest).
func compileISA(p *ir.Program, isa string) *native.Program {
	GinkgoHelper()
	if err := native.Available(); err != nil {
		Skip(err.Error()) // built without cgo: nothing compiled can run
	}
	prog, err := native.Compile(context.Background(), p, native.Options{CacheDir: suiteCache, ISA: isa})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(prog.Close)
	return prog
}

// run runs fn natively and expects success.
func run(prog *native.Program, fn string, in map[string]*tensor.Tensor) map[string]*tensor.Tensor {
	GinkgoHelper()
	r, err := prog.Run(context.Background(), fn, in)
	Expect(err).NotTo(HaveOccurred())
	Expect(r.Path).To(Equal(executor.Native))
	return r.Outputs
}

func f32(shape []int, data ...float32) *tensor.Tensor { return tensor.FromFloat32(data, shape...) }

func sh(d ...int) []int { return d }

// fallbackRun runs fn of p on the fallback interpreter.
func fallbackRun(p *ir.Program, fn string, in map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
	return fallback.Run(context.Background(), p.Func(fn), in)
}

func boundaryInputs() map[string]*tensor.Tensor {
	return map[string]*tensor.Tensor{"x": f32(sh(2, 2), 1, 2, 3, 4), "y": f32(sh(2), 1, 2), "k": tensor.Scalar(5)}
}
