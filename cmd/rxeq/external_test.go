package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/external"
)

// pythonWith skips a spec unless /usr/bin/python3 imports numpy (CI
// installs Debian's python3-numpy).
func pythonWith(module string) {
	GinkgoHelper()
	if err := exec.Command("/usr/bin/python3", "-c", "import "+module).Run(); err != nil {
		Skip("/usr/bin/python3 cannot import " + module + " (CI installs python3-numpy and python3-torch)")
	}
}

var _ = Describe("external executors on the command line", func() {
	It("parses --executor NAME=COMMAND and refuses the built-in names and repeats", func() {
		var s executorSpecs
		Expect(s.Set("np=/usr/bin/python3 'my dir/a.py' m.py")).To(Succeed())
		Expect(s[0].Name).To(Equal("np"))
		Expect(s[0].Command).To(Equal([]string{"/usr/bin/python3", "my dir/a.py", "m.py"}))
		Expect(s.Set("np=other")).To(MatchError(ContainSubstring(`executor "np" given twice`)))
		Expect(s.Set("native=cmd")).To(MatchError(ContainSubstring("taken by a built-in executor")))
		Expect(s.flags()).To(Equal(` --executor 'np=/usr/bin/python3 '\''my dir/a.py'\'' m.py'`))
		// The rerun flag splits back into the same argv.
		again, err := external.ParseSpec("np=/usr/bin/python3 'my dir/a.py' m.py")
		Expect(err).NotTo(HaveOccurred())
		Expect(again.Command).To(Equal(s[0].Command))
	})

	It("lets rxeq fuzz and reduce name an --executor in --executors", func() {
		var s executorSpecs
		Expect(s.Set("np=/usr/bin/python3 m.py")).To(Succeed())
		c, err := buildChecker("oracle,fallback,np", nativeSetup{external: s})
		Expect(err).NotTo(HaveOccurred())
		defer executor.CloseAll(c.Executors)
		Expect(c.Executors).To(HaveLen(2))
		Expect(c.Executors[1].Name()).To(Equal(executor.Name("np")))
		_, err = buildChecker("oracle,nope", nativeSetup{external: s})
		Expect(err).To(MatchError(ContainSubstring(`unknown executor "nope" (want oracle, fallback, native, torch, onnxruntime, onnxruntime-noopt, pytorch, torchscript, numpy, tfjs-cpu, tfjs-wasm, native-avx2, native-sse2, native-c, native-tiled, or a name defined with --executor)`)))
	})

	It("runs the reference scenario through a Python executor, skipping what the module lacks, into the reports", Label("e2e"), func() {
		pythonWith("numpy")
		dir := GinkgoT().TempDir()
		adapter, _ := filepath.Abs("../../python/rxeq_executor.py")
		module, _ := filepath.Abs("../../external/testdata/python/partial.py")
		code, out, errOut := rxeq("run", "--backend", "partial", "--batch", "1",
			"--executor", "partial=/usr/bin/python3 "+adapter+" "+module,
			"--json", filepath.Join(dir, "r.json"), "--junit", filepath.Join(dir, "j.xml"), "../../scenarios/reference.rx")
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(MatchRegexp(`reference-scoring\s+score_linear\s+1\s+partial\s+partial\s+PASS`))
		Expect(out).To(MatchRegexp(`reference-scoring\s+score_mlp\s+1\s+partial\s+partial\s+SKIP`))
		Expect(out).To(ContainSubstring("1 passed, 0 failed, 0 errors, 2 skipped"))

		var rep struct {
			Cases []struct{ Function, Executor, Status, Message string }
		}
		b, err := os.ReadFile(filepath.Join(dir, "r.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(json.Unmarshal(b, &rep)).To(Succeed())
		Expect(rep.Cases).To(HaveLen(3))
		Expect(rep.Cases[1].Executor).To(Equal("partial"))
		Expect(rep.Cases[1].Status).To(Equal("skip"))
		Expect(rep.Cases[1].Message).To(ContainSubstring("partial does not serve score_mlp"))
		x, err := os.ReadFile(filepath.Join(dir, "j.xml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(x)).To(MatchRegexp(`<testcase name="score_mlp/b1/partial" classname="reference-scoring" time="[0-9.]+">\s*<skipped message="function not served: partial does not serve score_mlp`))
		Expect(string(x)).To(ContainSubstring(`skipped="2"`))
	})

	It("keeps the built-in executors, torch among them, beside an --executor", Label("e2e", "native"), func() {
		pythonWith("numpy")
		adapter, _ := filepath.Abs("../../python/rxeq_executor.py")
		module, _ := filepath.Abs("../../external/testdata/python/partial.py")
		code, out, errOut := rxeq("run", "--batch", "1", "--executor", "partial=/usr/bin/python3 "+adapter+" "+module,
			"../../scenarios/reference.rx")
		Expect(code).To(Equal(0), out+errOut)
		for _, e := range []string{"fallback", "native", "partial"} {
			Expect(out).To(MatchRegexp(`reference-scoring\s+score_linear\s+1\s+`+e+`\s+`+e+`\s+PASS`), e)
		}
		if err := builtin.Available(executor.Torch); err != nil {
			Expect(out).To(ContainSubstring("torch: not run on this machine: "))
		} else {
			Expect(out).To(MatchRegexp(`reference-scoring\s+score_linear\s+1\s+torch\s+torch\s+PASS`))
		}
	})
})

var _ = Describe("fuzz and reduce with an executor that serves its own functions by name", func() {
	// minimal_executor.py serves echo by name whatever program it is
	// given: fuzzing or shrinking programs against it says nothing.
	mini := func() string {
		script, _ := filepath.Abs("../../examples/python/minimal_executor.py")
		return "mini=/usr/bin/python3 " + script
	}

	It("refuses it in rxeq fuzz instead of counting programs it never ran", func() {
		code, out, errOut := rxeq("fuzz", "--count", "3", "--executors", "oracle,mini", "--executor", mini(),
			"--out", GinkgoT().TempDir(), "--parallel", "1")
		Expect(code).To(Equal(exitUsage), out+errOut)
		Expect(errOut).To(ContainSubstring("executor mini serves its own functions by name (echo)"))
		Expect(errOut).To(ContainSubstring("cannot be fuzzed or reduced"))
		Expect(out).NotTo(ContainSubstring("0 findings"))
	})

	It("refuses it in rxeq reduce instead of shrinking to an unrelated program", func() {
		code, out, errOut := rxeq("reduce", "--executors", "oracle,mini", "--executor", mini(), "../../external/testdata/echo.rx")
		Expect(code).To(Equal(exitUsage), out+errOut)
		Expect(errOut).To(ContainSubstring("executor mini serves its own functions by name (echo)"))
		Expect(out).To(BeEmpty())
	})

	It("is an error kind callers match with errors.Is", func() {
		var s executorSpecs
		Expect(s.Set(mini())).To(Succeed())
		c, err := buildChecker("oracle,mini", nativeSetup{external: s})
		Expect(err).NotTo(HaveOccurred())
		defer executor.CloseAll(c.Executors)
		_, err = c.Check(context.Background(), mustReadFile("../../external/testdata/echo.rx"))
		Expect(errors.Is(err, executor.ErrByName)).To(BeTrue(), fmt.Sprint(err))
	})
})

func mustReadFile(name string) []byte {
	GinkgoHelper()
	b, err := os.ReadFile(name)
	Expect(err).NotTo(HaveOccurred())
	return b
}

var _ = Describe("an answer rxeq rejects", func() {
	// float64_executor.py is minimal_executor.py answering echo's y as
	// float64: outputs that are not the function's.
	It("reads as a rejected answer, not as an error of the executor's program", func() {
		src, err := os.ReadFile("../../examples/python/minimal_executor.py")
		Expect(err).NotTo(HaveOccurred())
		script := strings.Replace(string(src),
			`send({"type": "result", "id": msg["id"], "input_crc32": crcs,
              "tensors": [{"name": "y", "dtype": x["dtype"], "shape": x["shape"], "nbytes": x["nbytes"]}]},
             [blobs["x"]])`,
			`n = x["nbytes"] // 4
        y = struct.pack("<%dd" % n, *struct.unpack("<%df" % n, blobs["x"]))
        send({"type": "result", "id": msg["id"], "input_crc32": crcs,
              "tensors": [{"name": "y", "dtype": "float64", "shape": x["shape"], "nbytes": len(y)}]}, [y])`, 1)
		Expect(script).NotTo(Equal(string(src)), "the example changed: update this test")
		path := filepath.Join(GinkgoT().TempDir(), "float64_executor.py")
		Expect(os.WriteFile(path, []byte(script), 0o600)).To(Succeed())
		code, out, errOut := rxeq("run", "--backend", "f64", "--batch", "2", "--executor", "f64=/usr/bin/python3 "+path, "../../external/testdata/echo.rx")
		Expect(code).To(Equal(exitFail), errOut)
		Expect(out).To(ContainSubstring("rxeq rejected the executor's answer: f64 returned wrong outputs for echo: output y is float64 [2 32], want float32 [2 32]"))
		Expect(out).NotTo(ContainSubstring("unclassified"))
		Expect(errors.Is(external.ErrOutput, executor.ErrRejected)).To(BeTrue())
		Expect(errors.Is(external.ErrInputModified, executor.ErrRejected)).To(BeTrue())
	})
})

var _ = Describe("--executor-func", func() {
	It("maps a program's function to the name the executor serves it by", func() {
		path := filepath.Join(GinkgoT().TempDir(), "copy.rx")
		Expect(os.WriteFile(path, []byte("//rx:scenario copy\n//rx:input x normal(0, 1)\npackage p\n\nfunc copyx(x [B][32]float32) (y [B][32]float32) {\n\ty = x\n\treturn\n}\n"), 0o600)).To(Succeed())
		script, _ := filepath.Abs("../../examples/python/minimal_executor.py")
		mini := "mini=/usr/bin/python3 " + script
		code, out, errOut := rxeq("run", "--backend", "mini", "--executor", mini, path)
		Expect(code).To(Equal(exitOK), errOut)
		Expect(out).To(ContainSubstring("0 passed, 0 failed, 1 skipped"))
		code, out, errOut = rxeq("run", "--backend", "mini", "--executor", mini, "--executor-func", "mini:copyx=echo", path)
		Expect(code).To(Equal(exitOK), errOut)
		Expect(out).To(ContainSubstring("1 passed, 0 failed"))
		code, _, errOut = rxeq("run", "--backend", "mini", "--executor", mini, "--executor-func", "other:copyx=echo", path)
		Expect(code).To(Equal(exitUsage))
		Expect(errOut).To(ContainSubstring("--executor-func other:copyx=echo: no --executor other"))
		code, _, errOut = rxeq("run", "--executor-func", "copyx=echo", path)
		Expect(code).To(Equal(exitUsage))
		Expect(errOut).To(ContainSubstring("want NAME:FUNC=THEIRS"))
	})
})
