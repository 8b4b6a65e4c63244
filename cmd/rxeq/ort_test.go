//go:build cgo

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/onnx/ort"
)

var _ = Describe("the ONNX Runtime executors", Label("e2e"), func() {
	It("without the library: naming them exits 2 with the reason and how to install it", func() {
		GinkgoT().Setenv(builtin.EnvORTLib, filepath.Join(GinkgoT().TempDir(), "libonnxruntime.so.1"))
		code, out, errOut := rxeq("run", "--backend", "oracle,onnxruntime", "reference-scoring")
		Expect(code).To(Equal(2))
		Expect(out).To(BeEmpty())
		Expect(errOut).To(ContainSubstring("rxeq run: --backend onnxruntime: ONNX Runtime unavailable: no ONNX Runtime library at "))
		Expect(errOut).To(ContainSubstring("npm pack onnxruntime-node@1.30.0"))
		code, _, errOut = rxeq("fuzz", "--executors", "oracle,onnxruntime-noopt", "--count", "1")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("onnxruntime-noopt: ONNX Runtime unavailable"))
	})

	// ../../ledger/programs/ort-divmulfusion-rem.rx: DivMulFusion makes the
	// int64 remainder of 1 by 3 zero under onnxruntime only.
	It("write a repro_onnxruntime.py beside the .npy files of an expected failure, which exits 1", func() {
		if _, err := ort.Find(os.Getenv(builtin.EnvORTLib)); err != nil {
			if os.Getenv("RXEQ_REQUIRE_ORT") != "" {
				Fail(err.Error())
			}
			Skip(err.Error())
		}
		dir := GinkgoT().TempDir()
		code, stdout, stderr := rxeq("run", "--backend", "oracle,onnxruntime,onnxruntime-noopt", "--dump", dir, "../../ledger/programs/ort-divmulfusion-rem.rx")
		Expect(code).To(Equal(exitOK), stdout+stderr)
		Expect(stdout).To(ContainSubstring("XFAIL ort-divmulfusion-rem/f/b1/onnxruntime"))
		caseDir := filepath.Join(dir, "ort-divmulfusion-rem", "f", "b1")
		Expect(filepath.Join(caseDir, "repro_onnxruntime-noopt.py")).NotTo(BeAnExistingFile(), "the case passed")
		repro := filepath.Join(caseDir, "repro_onnxruntime.py")
		Expect(repro).To(BeAnExistingFile())
		out, err := exec.Command("/usr/bin/python3", "-B", repro).CombinedOutput()
		var ee *exec.ExitError
		Expect(errors.As(err, &ee)).To(BeTrue(), string(out))
		Expect(ee.ExitCode()).To(Equal(1), string(out))
		Expect(string(out)).To(ContainSubstring("r: 1 / 1 mismatched; first:\n    [] want 1 (1) got 0 (0)"))
		Expect(string(out)).To(ContainSubstring("REPRODUCED"))
	})

	It("with the library: run the reference scenario and name ONNX Runtime in the report", func() {
		if _, err := ort.Find(os.Getenv(builtin.EnvORTLib)); err != nil {
			if os.Getenv("RXEQ_REQUIRE_ORT") != "" {
				Fail(err.Error())
			}
			Skip(err.Error())
		}
		jsonPath := filepath.Join(GinkgoT().TempDir(), "r.json")
		code, out, errOut := rxeq("run", "--backend", "oracle,onnxruntime,onnxruntime-noopt", "--json", jsonPath, "reference-scoring")
		Expect(code).To(Equal(0), out+errOut)
		data, err := os.ReadFile(jsonPath)
		Expect(err).NotTo(HaveOccurred())
		var rep struct {
			Frameworks map[string]string `json:"frameworks"`
		}
		Expect(json.Unmarshal(data, &rep)).To(Succeed())
		Expect(rep.Frameworks).To(Equal(map[string]string{
			"onnxruntime":       "ONNX Runtime 1.30.0, graph optimization all (ORT_ENABLE_ALL)",
			"onnxruntime-noopt": "ONNX Runtime 1.30.0, graph optimization none (ORT_DISABLE_ALL)",
		}))
	})

	// ../../isolate/testdata/ort-crash.rx's f0 makes ONNX Runtime 1.30.0
	// die of SIGSEGV while it creates the session (not every time), f1
	// does not: under --isolate, f0's cases fail with the crash, the
	// worker is restarted and f1's cases pass.
	It("under --isolate: a crash of ONNX Runtime fails that function's cases and the run goes on", func() {
		if _, err := ort.Find(os.Getenv(builtin.EnvORTLib)); err != nil {
			if os.Getenv("RXEQ_REQUIRE_ORT") != "" {
				Fail(err.Error())
			}
			Skip(err.Error())
		}
		crashed := false
		crashEveryTime()
		for range 20 {
			code, out, errOut := rxeq("run", "--isolate", "--backend", "oracle,onnxruntime", "../../isolate/testdata/ort-crash.rx")
			Expect(out).NotTo(ContainSubstring("FAIL ort-crash/f1"), out+errOut)
			Expect(out).To(MatchRegexp(`(?m)^\d+ passed`))
			if code == 0 {
				continue
			}
			Expect(code).To(Equal(1), out+errOut)
			Expect(out).To(ContainSubstring(`"onnxruntime crashed: signal SIGSEGV"`))
			Expect(out).To(ContainSubstring("--- FAIL ort-crash/f0/"))
			crashed = true
			break
		}
		Expect(crashed).To(BeTrue(), "ONNX Runtime did not crash in 20 runs")
	})

	// The same program with rxeq run's default flags, as its own process
	// (a crash in this one would end the suite): ONNX Runtime runs in a
	// worker by default, so f0's cases fail with the crash and the run
	// reports f1's cases and writes its report; with --isolate-ort=false
	// nothing but the crash is left.
	It("by default: a crash of ONNX Runtime fails that function's cases, the other cases are reported", func() {
		if _, err := ort.Find(os.Getenv(builtin.EnvORTLib)); err != nil {
			if os.Getenv("RXEQ_REQUIRE_ORT") != "" {
				Fail(err.Error())
			}
			Skip(err.Error())
		}
		exe, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())
		crashed := false
		crashEveryTime()
		for range 20 {
			jsonPath := filepath.Join(GinkgoT().TempDir(), "r.json")
			cmd := exec.Command(exe, asRxeq, "run", "--backend", "oracle,onnxruntime", "--json", jsonPath, "../../isolate/testdata/ort-crash.rx")
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			err := cmd.Run()
			if err == nil {
				continue
			}
			var ee *exec.ExitError
			Expect(errors.As(err, &ee)).To(BeTrue(), "%v", err)
			Expect(ee.ExitCode()).To(Equal(1), "%v\n%s%s", err, out.String(), errOut.String())
			Expect(out.String()).To(ContainSubstring(`"onnxruntime crashed: signal SIGSEGV"`))
			Expect(out.String()).To(ContainSubstring("--- FAIL ort-crash/f0/"))
			Expect(out.String()).NotTo(ContainSubstring("FAIL ort-crash/f1"))
			data, err := os.ReadFile(jsonPath)
			Expect(err).NotTo(HaveOccurred())
			var rep struct {
				Cases []struct {
					Function string `json:"function"`
					Executor string `json:"executor"`
					Status   string `json:"status"`
				} `json:"cases"`
			}
			Expect(json.Unmarshal(data, &rep)).To(Succeed())
			f1 := 0
			for _, c := range rep.Cases {
				if c.Function == "f1" && c.Executor == "onnxruntime" {
					Expect(c.Status).To(Equal("pass"))
					f1++
				}
			}
			Expect(f1).To(Equal(3), "f1's three batches through onnxruntime")
			crashed = true
			break
		}
		Expect(crashed).To(BeTrue(), "ONNX Runtime did not crash in 20 runs")
	})

	It("rxeq fuzz: the crash of seed 361 is a crash finding and the next program runs", func() {
		if _, err := ort.Find(os.Getenv(builtin.EnvORTLib)); err != nil {
			if os.Getenv("RXEQ_REQUIRE_ORT") != "" {
				Fail(err.Error())
			}
			Skip(err.Error())
		}
		crashed := false
		crashEveryTime()
		for range 10 {
			dir := GinkgoT().TempDir()
			code, out, errOut := rxeq("fuzz", "--seed", "361", "--count", "2", "--exclude", "forlocal", "--executors", "oracle,onnxruntime",
				"--emi", "0", "--noise-runs", "0", "--reduce-tests", "1", "--parallel", "1", "--out", dir)
			Expect(out + errOut).To(ContainSubstring("2 programs"))
			if code == 0 {
				continue
			}
			Expect(code).To(Equal(1), out+errOut)
			Expect(out + errOut).To(ContainSubstring(`FOUND seed 361: onnxruntime vs oracle: error in f0`))
			Expect(out + errOut).To(ContainSubstring(`"onnxruntime crashed: signal SIGSEGV"`))
			Expect(out + errOut).NotTo(ContainSubstring("FOUND seed 362"))
			crashed = true
			break
		}
		Expect(crashed).To(BeTrue(), "ONNX Runtime did not crash in 10 campaigns")
	})

	It("rxeq conformance onnx: runs the node tests through both executors by default, and requires them under RXEQ_REQUIRE_ORT", func() {
		if _, err := os.Stat("/usr/share/libonnx-testdata/data/node"); err != nil {
			Skip("libonnx-testdata is not installed; ci/setup.sh installs it")
		}
		GinkgoT().Setenv("RXEQ_REQUIRE_ORT", "1")
		if _, err := ort.Find(os.Getenv(builtin.EnvORTLib)); err == nil {
			code, out, errOut := rxeq("conformance", "onnx")
			Expect(code).To(Equal(0), out+errOut)
			Expect(out).To(MatchRegexp(`\n  onnxruntime\s+(\d+) / (\d+) agree`))
			Expect(out).To(MatchRegexp(`\n  onnxruntime-noopt\s+(\d+) / (\d+) agree`))
			Expect(out).NotTo(MatchRegexp(`(?m)^FAIL `))
			// ONNX's own models too; their differences are reported, and
			// are ONNX Runtime's, not a failure.
			Expect(out).To(MatchRegexp(`(?m)^onnxruntime on ONNX's own models: \d+ found, \d+ runnable \(float32 and int64 tensors\), \d+ / \d+ agree$`))
			Expect(out).To(MatchRegexp(`(?m)^onnxruntime-noopt on ONNX's own models: `))
			Expect(out).To(ContainSubstring("  differs: test_resize_downsample_scales_linear_align_corners (onnxruntime, ONNX's model): "))
		}
		GinkgoT().Setenv(builtin.EnvORTLib, filepath.Join(GinkgoT().TempDir(), "libonnxruntime.so.1"))
		code, out, errOut := rxeq("conformance", "onnx", "--backend", "fallback,onnxruntime-noopt")
		Expect(code).To(Equal(2), out+errOut)
		Expect(errOut).To(HavePrefix("rxeq conformance: onnxruntime-noopt is required (RXEQ_REQUIRE_ORT is set) but unavailable: ONNX Runtime unavailable: no ONNX Runtime library at "))
		GinkgoT().Setenv("RXEQ_REQUIRE_ORT", "")
		code, out, errOut = rxeq("conformance", "onnx", "--backend", "fallback,onnxruntime-noopt")
		Expect(code).To(Equal(0), out+errOut)
		Expect(out).To(HavePrefix("onnxruntime-noopt: unavailable: ONNX Runtime unavailable: "))
	})
})

// crashEveryTime sets glibc's MALLOC_PERTURB_ for the rest of the spec,
// in this process and the workers and commands it starts: the crash of
// ../../isolate/testdata/ort-crash.rx (and of fuzz seed 361) is a read of
// uninitialised memory, which then comes every time (as in ortrepro's
// repro.py), not only when the heap happens to hold the wrong bytes: from
// a test binary whose worker runs with one P, 5 runs in 30 crashed
// without it.
func crashEveryTime() {
	GinkgoHelper()
	GinkgoT().Setenv("MALLOC_PERTURB_", "165")
}
