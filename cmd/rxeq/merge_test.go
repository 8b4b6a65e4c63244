package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/reports"
)

func readReport(path string) *reports.Report {
	GinkgoHelper()
	f, err := os.Open(path)
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	r, err := reports.ReadJSON(f)
	Expect(err).NotTo(HaveOccurred())
	return r
}

func caseKeys(r *reports.Report) []string {
	var out []string
	for _, c := range r.Cases {
		out = append(out, c.Scenario+"/"+c.Name()+"="+string(c.Status))
	}
	sort.Strings(out)
	return out
}

// caseOrder lists a report's cases in its order.
func caseOrder(r *reports.Report) []string {
	var out []string
	for _, c := range r.Cases {
		out = append(out, c.Scenario+"/"+c.Name())
	}
	return out
}

var _ = Describe("sharded CI", Label("e2e"), func() {
	It("merges the shards' reports into what the unsharded run reports", func() {
		dir := GinkgoT().TempDir()
		code, _, _ := rxeq("run", "--backend", "oracle,fallback", "--json", filepath.Join(dir, "all.json"))
		Expect(code).To(Equal(0))
		var shards []string
		for _, s := range []string{"1/3", "2/3", "3/3"} {
			p := filepath.Join(dir, "shard"+s[:1]+".json")
			code, _, _ := rxeq("run", "--backend", "oracle,fallback", "--shard", s, "--json", p)
			Expect(code).To(Equal(0))
			shards = append(shards, p)
		}
		merged, junit := filepath.Join(dir, "merged.json"), filepath.Join(dir, "merged.xml")
		code, out, errOut := rxeq(append([]string{"merge", "--json", merged, "--junit", junit}, shards...)...)
		Expect(code).To(Equal(0), errOut)
		all, m := readReport(filepath.Join(dir, "all.json")), readReport(merged)
		Expect(caseKeys(m)).To(Equal(caseKeys(all)))
		Expect(caseOrder(m)).To(Equal(caseOrder(all)), "the unsharded run's order")
		Expect(m.Locks).To(HaveLen(len(all.Locks)))
		Expect(out).To(ContainSubstring(fmt.Sprintf("3 reports, %d cases, locks 5/5 held", 2*catalogGroups())))
		Expect(out).To(MatchRegexp(fmt.Sprintf(`(?m)^%d passed, 0 failed$`, 2*catalogGroups())))
		if xmllint, err := exec.LookPath("xmllint"); err == nil {
			msg, err := exec.Command(xmllint, "--noout", "--schema", "../../reports/testdata/junit-10.xsd", junit).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "%s", msg)
		}
	})

	It("refuses reports that overlap, which are not shards of one run", func() {
		dir := GinkgoT().TempDir()
		p := filepath.Join(dir, "a.json")
		code, _, _ := rxeq("run", "--backend", "oracle", "--shard", "1/3", "--json", p)
		Expect(code).To(Equal(0))
		code, _, errOut := rxeq("merge", p, p)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("rxeq merge: cannot merge reports: reports 1 and 2 are both shard 1/3"))
	})

	It("refuses a set with a shard missing, naming it", func() {
		dir := GinkgoT().TempDir()
		var shards []string
		for _, s := range []string{"1/3", "3/3"} {
			p := filepath.Join(dir, "shard"+s[:1]+".json")
			code, _, _ := rxeq("run", "--backend", "oracle,fallback", "--shard", s, "--json", p)
			Expect(code).To(Equal(0))
			shards = append(shards, p)
		}
		code, out, errOut := rxeq(append([]string{"merge"}, shards...)...)
		Expect(code).To(Equal(2), out)
		Expect(errOut).To(Equal("rxeq merge: cannot merge reports: shard 2/3 is missing: its cases are in no report\n"))
	})

	It("takes the shard from GitLab's and Bazel's variables when --shard is not given", func() {
		dir := GinkgoT().TempDir()
		GinkgoT().Setenv("CI_NODE_TOTAL", "3")
		GinkgoT().Setenv("CI_NODE_INDEX", "2")
		code, _, _ := rxeq("run", "--backend", "oracle,fallback", "--json", filepath.Join(dir, "g.json"))
		Expect(code).To(Equal(0))
		code, _, _ = rxeq("run", "--backend", "oracle,fallback", "--shard", "2/3", "--json", filepath.Join(dir, "s.json"))
		Expect(code).To(Equal(0))
		Expect(caseKeys(readReport(filepath.Join(dir, "g.json")))).To(Equal(caseKeys(readReport(filepath.Join(dir, "s.json")))))

		GinkgoT().Setenv("CI_NODE_TOTAL", "")
		status := filepath.Join(dir, "status")
		GinkgoT().Setenv("TEST_TOTAL_SHARDS", "3")
		GinkgoT().Setenv("TEST_SHARD_INDEX", "1")
		GinkgoT().Setenv("TEST_SHARD_STATUS_FILE", status)
		code, _, _ = rxeq("run", "--backend", "oracle,fallback", "--json", filepath.Join(dir, "b.json"))
		Expect(code).To(Equal(0))
		Expect(caseKeys(readReport(filepath.Join(dir, "b.json")))).To(Equal(caseKeys(readReport(filepath.Join(dir, "s.json")))))
		Expect(status).To(BeAnExistingFile())

		GinkgoT().Setenv("TEST_SHARD_INDEX", "7")
		code, _, errOut := rxeq("run", "--backend", "oracle")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`TEST_SHARD_INDEX="7": want 0 to 2`))
	})
})
