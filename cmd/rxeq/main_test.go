package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/reports"
	"github.com/rextio/rxeq/scenarios"
)

// rxeq runs the command in-process and returns its exit code and output.
func rxeq(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = runMain(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

var _ = Describe("rxeq", Label("e2e"), func() {
	It("prints usage and exits 2 without a command or with an unknown one", func() {
		code, _, errOut := rxeq()
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("usage: rxeq <command>"))
		code, _, errOut = rxeq("frobnicate")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`unknown command "frobnicate"`))
	})

	Describe("check", func() {
		It("prints file:line:col: message for every error and exits 2", func() {
			code, _, errOut := rxeq("check", "testdata/broken.rx")
			Expect(code).To(Equal(2))
			Expect(errOut).To(ContainSubstring("testdata/broken.rx:3:13: unsupported element type float64"))
			Expect(errOut).To(ContainSubstring("testdata/broken.rx:4:6: unknown function Softplus"))
		})

		It("accepts a good file", func() {
			code, out, _ := rxeq("check", "testdata/badlock.rx")
			Expect(code).To(Equal(0))
			Expect(out).To(Equal("testdata/badlock.rx: ok (decoy, score)\n"))
		})
	})

	It("lists the built-in catalog", func() {
		code, out, _ := rxeq("list")
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("reference-scoring"))
		Expect(out).To(MatchRegexp(`score_linear\s+1 16 128\s+\d+`))
	})

	It("prints one generated C function with gen --func", func() {
		code, out, _ := rxeq("gen", "--func", "score", "testdata/badlock.rx")
		Expect(code).To(Equal(0))
		Expect(out).To(HavePrefix("/* score: testdata/badlock.rx:15:1 */\n"))
		Expect(out).To(ContainSubstring("round_idx < 3"))
		Expect(out).NotTo(ContainSubstring("round_idx < 4"))
	})

	It("fails a lock that only a decoy function satisfies, with the near miss", func() {
		code, out, _ := rxeq("lock", "testdata/badlock.rx")
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring("FAIL bad-lock/score"))
		Expect(out).To(ContainSubstring("for (int64_t round_idx = 0; round_idx < 3; round_idx++)"))
	})

	It("rejects bad flags with exit 2", func() {
		code, _, errOut := rxeq("run", "--shard", "3/2")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("shard 3/2"))
		code, _, errOut = rxeq("run", "--native-mode", "sometimes")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`unknown native mode "sometimes"`))
		code, _, _ = rxeq("run", "testdata/broken.rx")
		Expect(code).To(Equal(2))
	})

	It("runs the catalog through every executor this machine has and writes loadable reports", Label("native"), func() {
		// Every group × oracle, fallback, native, and torch when libtorch
		// is installed (else the output says why torch did not run).
		cases, torch := 3*catalogGroups(), builtin.Available(executor.Torch) == nil
		if torch {
			cases = 4 * catalogGroups()
		}
		dir := GinkgoT().TempDir()
		jsonPath, junitPath, dump := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml"), filepath.Join(dir, "dump")
		code, out, errOut := rxeq("run", "--json", jsonPath, "--junit", junitPath, "--dump", dump)
		Expect(code).To(Equal(0), out+errOut)
		summary := fmt.Sprintf(`%d passed, 0 failed, 0 errors; locks 5/5 held`, cases)
		if torch {
			// op-accuracy/sigmoid_underflow's 3 batches skip torch
			// (//rx:skip: ledger torch-sigmoid-underflow).
			summary = fmt.Sprintf(`%d passed, 0 failed, 0 errors, 3 skipped; locks 5/5 held`, cases-3)
		}
		Expect(out).To(MatchRegexp(summary))
		Expect(out).To(MatchRegexp(`reference-scoring\s+score_linear\s+128\s+native\s+native\s+PASS`))
		if torch {
			Expect(out).To(MatchRegexp(`reference-scoring\s+score_linear\s+128\s+torch\s+torch\s+PASS`))
		} else {
			Expect(out).To(ContainSubstring("torch: not run on this machine: libtorch not found"))
		}

		f, err := os.Open(jsonPath)
		Expect(err).NotTo(HaveOccurred())
		defer f.Close()
		rep, err := reports.ReadJSON(f)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Cases).To(HaveLen(cases))
		if torch {
			Expect(rep.Framework).To(HavePrefix("libtorch "))
			Expect(filepath.Join(dump, "reference-scoring/score_linear/b16/outputs/torch/probs.npy")).To(BeAnExistingFile())
		} else {
			Expect(rep.Unavailable).To(HaveLen(1))
		}
		Expect(rep.Locks).To(HaveLen(5))
		Expect(rep.Compiler).NotTo(BeEmpty())

		if xmllint, err := exec.LookPath("xmllint"); err == nil {
			cmd := exec.Command(xmllint, "--noout", "--schema", "../../reports/testdata/junit-10.xsd", junitPath)
			msg, err := cmd.CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(msg))
		}
		Expect(filepath.Join(dump, "manifest.json")).To(BeAnExistingFile())
		Expect(filepath.Join(dump, "reference-scoring/score_linear/b16/inputs/x.npy")).To(BeAnExistingFile())
		Expect(filepath.Join(dump, "reference-scoring/score_linear/b16/outputs/native/probs.npy")).To(BeAnExistingFile())
	})

	Describe("without libtorch", Label("native"), func() {
		BeforeEach(func() {
			// A libtorch prefix with nothing in it: the torch runtime is
			// unavailable, whatever this machine has installed.
			GinkgoT().Setenv(builtin.EnvTorchRoot, GinkgoT().TempDir())
		})

		It("fails --backend torch at once with exit 2, naming libtorch-dev", func() {
			code, out, errOut := rxeq("run", "--backend", "oracle,native,torch")
			Expect(code).To(Equal(2))
			Expect(out).To(BeEmpty())
			Expect(errOut).To(ContainSubstring("rxeq run: --backend torch: libtorch not found (install the Debian package libtorch-dev"))
			code, _, errOut = rxeq("fuzz", "--executors", "oracle,torch", "--count", "1")
			Expect(code).To(Equal(2))
			Expect(errOut).To(ContainSubstring("executor torch: libtorch not found (install the Debian package libtorch-dev"))
		})

		It("leaves torch out of the default run and says so in the output and the report", func() {
			dir := GinkgoT().TempDir()
			jsonPath, junitPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml")
			code, out, errOut := rxeq("run", "--backend", "oracle,fallback", "--json", jsonPath, "--junit", junitPath)
			Expect(code).To(Equal(0), out+errOut)
			Expect(out).To(ContainSubstring("torch: not run on this machine: libtorch not found (install the Debian package libtorch-dev"))
			f, err := os.Open(jsonPath)
			Expect(err).NotTo(HaveOccurred())
			defer f.Close()
			rep, err := reports.ReadJSON(f)
			Expect(err).NotTo(HaveOccurred())
			Expect(rep.Unavailable).To(HaveLen(1))
			Expect(rep.Unavailable[0].Executor).To(Equal("torch"))
			Expect(rep.Unavailable[0].Reason).To(ContainSubstring("libtorch-dev"))
			junit, err := os.ReadFile(junitPath)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(junit)).To(ContainSubstring(`name="unavailable.torch"`))
		})
	})

	It("rejects --torch-threads below 1", func() {
		code, _, errOut := rxeq("run", "--torch-threads", "0")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("--torch-threads 0: want a positive number"))
	})

	It("exits 1 when a case or a lock fails", Label("native"), func() {
		code, out, _ := rxeq("run", "--backend", "oracle,fallback", "testdata/badlock.rx")
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring("--- FAIL bad-lock/score/lock"))
	})

	It("splits the cases across shards, each case once", func() {
		seen := map[string]int{}
		for _, shard := range []string{"1/3", "2/3", "3/3"} {
			dir := GinkgoT().TempDir()
			code, _, _ := rxeq("run", "--backend", "oracle,fallback", "--shard", shard, "--json", filepath.Join(dir, "r.json"))
			Expect(code).To(Equal(0))
			f, err := os.Open(filepath.Join(dir, "r.json"))
			Expect(err).NotTo(HaveOccurred())
			rep, err := reports.ReadJSON(f)
			f.Close()
			Expect(err).NotTo(HaveOccurred())
			for _, c := range rep.Cases {
				seen[c.Scenario+"/"+c.Name()]++
			}
		}
		Expect(seen).To(HaveLen(2 * catalogGroups()))
		for name, n := range seen {
			Expect(n).To(Equal(1), name)
		}
	})
})

// catalogGroups counts the built-in catalog's (scenario, function, batch)
// groups: each is one case per executor.
func catalogGroups() int {
	GinkgoHelper()
	files, err := scenarios.Catalog()
	Expect(err).NotTo(HaveOccurred())
	n := 0
	for _, f := range files {
		n += len(f.Funcs) * max(len(f.Batches), 1)
	}
	return n
}
