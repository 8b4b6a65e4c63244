package ledger_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/ledger"
	"github.com/rextio/rxeq/program"
)

var _ = Describe("the checked-in ledger", func() {
	It("parses, and every entry is documented in docs/findings.md and has a program that checks", func() {
		l := ledger.Default()
		Expect(l.Entries).NotTo(BeEmpty())
		doc, err := os.ReadFile(filepath.Join("..", "docs", "findings.md"))
		Expect(err).NotTo(HaveOccurred())
		for _, e := range l.Entries {
			Expect(string(doc)).To(ContainSubstring("`"+e.ID+"`"), "entry %s is not in docs/findings.md", e.ID)
			Expect(e.Explanation).NotTo(BeEmpty())
			if e.Program == "" {
				continue
			}
			src, err := ledger.DefaultProgram(e.Program)
			Expect(err).NotTo(HaveOccurred(), e.ID)
			_, err = program.Parse(e.Program, src)
			Expect(err).NotTo(HaveOccurred(), e.ID)
		}
		Expect(l.Match(ledger.Case{Executor: "torch", Version: "1.13.1", Category: "signed-zero", Ops: []string{"Div", "Maximum"}, Values: "opposite-inf"}).ID).
			To(Equal("torch-maximum-signed-zero"))
	})
})

var _ = Describe("matching", func() {
	l, err := ledger.Parse([]byte(`{"schema": "rxeq.ledger/v1", "entries": [
		{"id": "a", "executor": "torch", "versions": ">=1.13 <2.0", "category": "signed-zero",
		 "match": {"ops": ["Maximum", "Minimum"], "values": ["opposite-inf"]}, "explanation": "why", "upstream": "https://example.org/1"}]}`))

	It("needs the executor, a version in range, the category and every matcher field", func() {
		Expect(err).NotTo(HaveOccurred())
		ok := ledger.Case{Executor: "torch", Version: "1.13.1", Category: "signed-zero", Ops: []string{"Div", "Minimum"}, Values: "opposite-inf"}
		Expect(l.Match(ok)).NotTo(BeNil())
		Expect(l.Match(ok).Text()).To(Equal("a: why (https://example.org/1)"))
		for name, edit := range map[string]func(c *ledger.Case){
			"executor": func(c *ledger.Case) { c.Executor = "native" },
			"version":  func(c *ledger.Case) { c.Version = "2.1.0" },
			"old":      func(c *ledger.Case) { c.Version = "1.12.9" },
			"category": func(c *ledger.Case) { c.Category = "accuracy" },
			"ops":      func(c *ledger.Case) { c.Ops = []string{"Relu"} },
			"values":   func(c *ledger.Case) { c.Values = "finite" },
		} {
			c := ok
			edit(&c)
			Expect(l.Match(c)).To(BeNil(), name)
		}
		unknown := ok
		unknown.Version = ""
		Expect(l.Match(unknown)).NotTo(BeNil(), "an unknown version is in every range")
	})

	It("rejects a malformed ledger with ErrLedger and says why", func() {
		for text, why := range map[string]string{
			`{"schema": "other", "entries": []}`:                                                                             `schema "other"`,
			`{"schema": "rxeq.ledger/v1", "entries": [{"id": "x", "executor": "torch"}]}`:                                    "entry x: no explanation",
			`{"schema": "rxeq.ledger/v1", "entries": [{"id": "x", "executor": "t", "explanation": "e", "versions": "1.0"}]}`: `version bound "1.0"`,
			`{"schema": "rxeq.ledger/v1", "entries": [], "extra": 1}`:                                                        "unknown field",
		} {
			_, err := ledger.Parse([]byte(text))
			Expect(err).To(MatchError(ledger.ErrLedger), text)
			Expect(err.Error()).To(ContainSubstring(why))
		}
	})
})

var _ = Describe("the entries of the framework executors", func() {
	l := ledger.Default()
	categories := []string{"crash", "error-mismatch", "nan-inf", "signed-zero", "position", "accuracy", "semantics"}

	It("cover ONNX Runtime at both levels and the three Python executors, each entry complete with its program in place", func() {
		byExecutor := map[string][]string{}
		for _, e := range l.Entries {
			byExecutor[e.Executor] = append(byExecutor[e.Executor], e.ID)
		}
		want := map[string][]string{
			"onnxruntime":       {"divmulfusion-int64", "if-inline", "reducemax-nan", "argmax-nan", "reducesum-position", "matmul-position", "maximum-position", "tanh-accuracy", "sigmoid-accuracy", "maximum-signed-zero", "minimum-signed-zero", "relu-signed-zero", "max-reduce-signed-zero"},
			"onnxruntime-noopt": {"reducemax-nan", "argmax-nan", "reducesum-position", "matmul-position", "maximum-position", "tanh-accuracy", "sigmoid-accuracy", "maximum-signed-zero", "minimum-signed-zero", "relu-signed-zero", "max-reduce-signed-zero"},
			"pytorch":           {"maximum-signed-zero", "minimum-signed-zero", "relu-signed-zero", "max-reduce-signed-zero", "minmax-position", "sigmoid-position"},
			"torchscript":       {"maximum-signed-zero", "minimum-signed-zero", "relu-signed-zero", "max-reduce-signed-zero", "minmax-position", "sigmoid-position"},
			"numpy":             {"maximum-signed-zero", "minimum-signed-zero", "max-reduce-signed-zero"},
			"tfjs-cpu":          {"argmax-nan", "max-reduce-signed-zero"},
			"tfjs-wasm":         {"argmax-nan", "max-reduce-signed-zero", "maximum-signed-zero", "minimum-signed-zero", "maximum-nan", "minimum-nan", "relu-nan", "sigmoid-accuracy", "tanh-accuracy", "sigmoid-underflow"},
		}
		for executor, ids := range want {
			for _, id := range ids {
				Expect(byExecutor[executor]).To(ContainElement(executor+"-"+id), executor)
			}
		}
		for _, e := range l.Entries {
			if _, ok := want[e.Executor]; !ok {
				continue
			}
			Expect(e.Framework).NotTo(BeEmpty(), e.ID)
			Expect(e.Versions).NotTo(BeEmpty(), e.ID)
			Expect(e.InRange("")).To(BeTrue(), e.ID)
			Expect(categories).To(ContainElement(e.Category), e.ID)
			if e.Match.Error == "" {
				Expect(e.Match.Ops).NotTo(BeEmpty(), e.ID)
				Expect(e.Match.Values).NotTo(BeEmpty(), e.ID)
			} else {
				// A failure of the executor: matched by its error's text.
				Expect(e.Category).To(Equal("error-mismatch"), e.ID)
			}
			if e.Upstream != "" {
				Expect(e.Upstream).To(MatchRegexp(`^https://github\.com/[^/]+/[^/]+/(issues|pull)/\d+$`), e.ID)
			}
			// The program is embedded, parses, and names the scenario its
			// file is called after (xpass is found by that scenario).
			Expect(e.Program).NotTo(BeEmpty(), e.ID)
			src, err := ledger.DefaultProgram(e.Program)
			Expect(err).NotTo(HaveOccurred(), e.ID)
			_, err = program.Parse(e.Program, src)
			Expect(err).NotTo(HaveOccurred(), e.ID)
			stem := strings.TrimSuffix(filepath.Base(e.Program), ".rx")
			Expect(string(src)).To(HavePrefix("//rx:scenario "+stem+"\n"), e.ID)
			_, err = os.Stat(e.Program) // relative to ledger/, as the CLI reads it
			Expect(err).NotTo(HaveOccurred(), e.ID)
		}
	})

	It("match what the catalog and the fuzzer show on those executors", func() {
		for _, tc := range []struct {
			c  ledger.Case
			id string
		}{
			{ledger.Case{Executor: "onnxruntime", Version: "1.30.0", Category: "nan-inf", Ops: []string{"Max", "Sum"}, Values: "nan", Scenario: "op-edges"}, "onnxruntime-reducemax-nan"},
			{ledger.Case{Executor: "onnxruntime-noopt", Category: "accuracy", Ops: []string{"Argmax"}, Values: "class"}, "onnxruntime-noopt-argmax-nan"},
			{ledger.Case{Executor: "onnxruntime", Category: "accuracy", Ops: []string{"Tanh", "Exp", "Log", "Sigmoid"}, Values: "finite", Scenario: "op-accuracy"}, "onnxruntime-tanh-accuracy"},
			{ledger.Case{Executor: "onnxruntime-noopt", Category: "signed-zero", Ops: []string{"Div", "Relu"}, Values: "opposite-inf"}, "onnxruntime-noopt-relu-signed-zero"},
			{ledger.Case{Executor: "pytorch", Version: "1.13.1", Category: "signed-zero", Ops: []string{"Div", "Relu"}, Values: "opposite-inf"}, "pytorch-relu-signed-zero"},
			{ledger.Case{Executor: "torchscript", Category: "signed-zero", Ops: []string{"Div", "Minimum"}, Values: "opposite-inf"}, "torchscript-minimum-signed-zero"},
			{ledger.Case{Executor: "numpy", Version: "1.24.2", Category: "signed-zero", Ops: []string{"Div", "Max"}, Values: "opposite-inf"}, "numpy-max-reduce-signed-zero"},
			{ledger.Case{Executor: "onnxruntime", Version: "1.30.0", Category: "error-mismatch", Ops: []string{"Maximum", "Mean", "Sum"},
				Error: `onnxruntime: f0: ort: creating a session: onnxruntime: ORT_FAIL: Exception during initialization: graph.cc:6312 Graph::InlineIfSubgraph(bool, Node&): input: rx_v11_out0 is not If node's input`}, "onnxruntime-if-inline"},
			{ledger.Case{Executor: "onnxruntime-noopt", Category: "position", Ops: []string{"MatMul"}, Values: "finite"}, "onnxruntime-noopt-matmul-position"},
		} {
			e := l.Match(tc.c)
			Expect(e).NotTo(BeNil(), tc.id)
			Expect(e.ID).To(Equal(tc.id))
		}
		Expect(l.Match(ledger.Case{Executor: "numpy", Category: "signed-zero", Ops: []string{"Div", "Relu"}, Values: "opposite-inf"})).To(BeNil(),
			"np.maximum(-0., 0) is +0: NumPy has no Relu entry")
		Expect(l.Match(ledger.Case{Executor: "onnxruntime-noopt", Category: "accuracy", Ops: []string{"CheckedRem"}, Values: "class"})).To(BeNil(),
			"DivMulFusion is an optimization: onnxruntime-noopt computes the remainder")
		Expect(l.Match(ledger.Case{Executor: "onnxruntime", Category: "error-mismatch", Ops: []string{"Maximum", "Mean", "Sum"},
			Error: "onnxruntime: f0: ort: creating a session: ORT_FAIL: Load model failed"})).To(BeNil(),
			"another failure of ONNX Runtime on the same ops is not the If inlining")
		Expect(l.Match(ledger.Case{Executor: "onnxruntime", Version: "1.31.0", Category: "signed-zero", Ops: []string{"Relu"}, Values: "opposite-inf"})).To(BeNil(),
			"the ONNX Runtime entries hold for 1.30 only")
	})
})
