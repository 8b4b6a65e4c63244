package fuzz_test

import (
	"bytes"
	"go/format"
	"regexp"
	"runtime"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/program"
)

// seedsChecked is how many seeds the checker test runs.
const seedsChecked = 10000

var _ = Describe("Generate", func() {
	It("produces programs that pass the checker for 10 000 seeds", func() {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var failures []string
		workers := runtime.GOMAXPROCS(0)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer GinkgoRecover()
				for seed := uint64(w); seed < seedsChecked; seed += uint64(workers) {
					p := fuzz.Generate(seed, fuzz.Config{})
					if _, err := program.Parse("gen.rx", p.Source); err != nil {
						mu.Lock()
						failures = append(failures, string(p.Source)+"\n"+err.Error())
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		Expect(failures).To(BeEmpty())
	})

	It("is deterministic and gofmt-formatted", func() {
		for seed := range uint64(200) {
			a := fuzz.Generate(seed, fuzz.Config{})
			b := fuzz.Generate(seed, fuzz.Config{})
			Expect(a.Source).To(Equal(b.Source))
			formatted, err := format.Source(a.Source)
			Expect(err).NotTo(HaveOccurred())
			Expect(bytes.Equal(formatted, a.Source)).To(BeTrue(), "seed %d is not gofmt-formatted", seed)
		}
		Expect(fuzz.Generate(1, fuzz.Config{}).Source).NotTo(Equal(fuzz.Generate(2, fuzz.Config{}).Source))
	})

	It("writes the directives every parameter needs", func() {
		for seed := range uint64(100) {
			f, err := program.Parse("gen.rx", fuzz.Generate(seed, fuzz.Config{}).Source)
			Expect(err).NotTo(HaveOccurred())
			Expect(f.Scenario).To(HavePrefix("fuzz-"))
			Expect(f.HasSeed).To(BeTrue())
			Expect(f.Batches).NotTo(BeEmpty())
			for _, b := range f.Batches {
				Expect(b).To(BeNumerically("<=", 97)) // 97: tiles of 64 through native-tiled
			}
			for _, fn := range f.Funcs {
				Expect(fn.Syms).To(Or(BeEmpty(), Equal([]string{"B"})))
				for _, p := range fn.Params {
					_, ok := f.Input(p.Name)
					Expect(ok).To(BeTrue(), "parameter %s of %s has no //rx:input", p.Name, fn.Name)
				}
			}
		}
	})

	It("covers every op and statement form over a few hundred seeds", func() {
		var all strings.Builder
		for seed := range uint64(300) {
			all.Write(fuzz.Generate(seed, fuzz.Config{}).Source)
		}
		text := all.String()
		for _, want := range []string{
			"MatMul(", "Transpose(", "Tanh(", "Exp(", "Log(", "Sigmoid(", "Relu(", "Abs(", "Sqrt(",
			"Maximum(", "Minimum(", "Softmax(", "LogSoftmax(", "Sum(", "Mean(", "Max(", ", true)", ", false)",
			"Argmax(", "CheckedRem(", "CheckedDiv(", " - ", " * ", " / ", "-(", " := ", " = ", " += ", " -= ", " *= ", " /= ",
			"for i", "for range", "} else if ", "} else {", " && ", " || ", "!(", " == ", " != ", " < ", " <= ", " > ", " >= ",
			"const ", "[B]", "[B][", "float32, n", "int64)", "return\n", "return ", "edge(", "const(",
		} {
			Expect(text).To(ContainSubstring(want))
		}
	})

	It("honours the knobs", func() {
		flat := fuzz.Config{MaxFuncs: 1, MaxStmts: 2, MaxDepth: -1, Features: fuzz.FeatTanh}
		for seed := range uint64(50) {
			p := fuzz.Generate(seed, flat)
			Expect(p.Features).To(Equal(fuzz.FeatTanh))
			f, err := program.Parse("gen.rx", p.Source)
			Expect(err).NotTo(HaveOccurred())
			Expect(f.Funcs).To(HaveLen(1))
			src := string(p.Source)
			for _, absent := range []string{"for ", "if ", "MatMul(", "Softmax(", "Exp("} {
				Expect(src).NotTo(ContainSubstring(absent))
			}
		}
		p := fuzz.Generate(3, fuzz.Config{Exclude: fuzz.FeatFor | fuzz.FeatForParam | fuzz.FeatForLocal})
		Expect(string(p.Source)).NotTo(ContainSubstring("for "))
	})

	It("parses feature lists as Features.String writes them", func() {
		f, err := fuzz.ParseFeatures("tanh, matmul,for")
		Expect(err).NotTo(HaveOccurred())
		Expect(f).To(Equal(fuzz.FeatTanh | fuzz.FeatMatMul | fuzz.FeatFor))
		Expect(f.String()).To(Equal("matmul,tanh,for"))
		all, err := fuzz.ParseFeatures("all")
		Expect(err).NotTo(HaveOccurred())
		Expect(all).To(Equal(fuzz.AllFeatures))
		back, err := fuzz.ParseFeatures(all.String())
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(fuzz.AllFeatures))
		none, err := fuzz.ParseFeatures("")
		Expect(err).NotTo(HaveOccurred())
		Expect(none).To(BeZero())
		_, err = fuzz.ParseFeatures("tanh,softplus")
		Expect(err).To(MatchError(ContainSubstring(`unknown feature "softplus" (known: all,matmul,transpose,tanh,`)))
	})

	It("reads seeds and knobs from fuzzer bytes", func() {
		seed, cfg := fuzz.ConfigFromBytes([]byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 3, 4, 5})
		Expect(seed).To(Equal(uint64(1)))
		Expect(cfg.MaxFuncs).To(Equal(3))
		Expect(cfg.MaxStmts).To(Equal(4))
		Expect(cfg.MaxDepth).To(Equal(-1)) // 4 % 4 == 0: flat
		Expect(cfg.MaxExprDepth).To(Equal(2))
		seed, cfg = fuzz.ConfigFromBytes(nil)
		Expect(seed).To(BeZero())
		Expect(cfg).To(Equal(fuzz.Config{}))
	})
})

var _ = Describe("special-value inputs", func() {
	It("draws edge(specials) inputs only with the specials feature", func() {
		with, without := 0, 0
		for seed := uint64(0); seed < 400; seed++ {
			src := string(fuzz.Generate(seed, fuzz.Config{Features: fuzz.AllFeatures}).Source)
			if strings.Contains(src, "edge(specials)") {
				with++
			}
			src = string(fuzz.Generate(seed, fuzz.Config{Features: fuzz.AllFeatures &^ fuzz.FeatSpecials}).Source)
			if strings.Contains(src, "edge(specials)") {
				without++
			}
		}
		Expect(with).To(BeNumerically(">", 40))
		Expect(without).To(BeZero())
	})
})

var _ = Describe("class values steering control flow", func() {
	It("uses the Argmax of a rank-1 parameter as an integer only with the classsteer feature", func() {
		steer := regexp.MustCompile(`Argmax\(\w+, 0\)`)
		with, without := 0, 0
		for seed := uint64(0); seed < 400; seed++ {
			all := fuzz.Generate(seed, fuzz.Config{Features: fuzz.AllFeatures})
			if steer.Match(all.Source) {
				with++
				_, err := program.Parse("gen.rx", all.Source)
				Expect(err).NotTo(HaveOccurred(), "%s", all.Source)
			}
			if steer.Match(fuzz.Generate(seed, fuzz.Config{Features: fuzz.AllFeatures &^ fuzz.FeatClassSteer &^ fuzz.FeatArgmax}).Source) {
				without++
			}
		}
		Expect(with).To(BeNumerically(">", 20))
		Expect(without).To(BeZero())
	})
})
