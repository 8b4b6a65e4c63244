package ci_test

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// script runs body under bash with steps.sh sourced, as the CI scripts
// run, and returns its exit code and its output lines.
func script(body string) (code int, lines []string) {
	GinkgoHelper()
	cmd := exec.Command("bash", "-c", "set -euo pipefail\nsource ./steps.sh\nci_begin t\n"+body)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	return code, strings.Split(strings.TrimRight(string(out), "\n"), "\n")
}

var _ = Describe("ci/steps.sh", func() {
	It("ends a passing script with one line naming every step with its wall and CPU time, and the totals", func() {
		code, lines := script("ci_step a\necho work\nci_step 'b c'\nci_note '3 packages'\nci_end\n")
		Expect(code).To(Equal(0))
		Expect(lines).To(Equal([]string{"== a", "work", "== b c", lines[3]}))
		Expect(lines[3]).To(MatchRegexp(`^t: PASS: 2 steps in \d+s \(\d+s cpu\): a \d+s/\d+s cpu, b c \(3 packages\) \d+s/\d+s cpu$`))
	})

	It("counts the CPU time of a step's commands and of what they ran, and not the time they slept", func() {
		// The busy child, a grandchild (bash -c runs awk) in a command
		// substitution, as a step's commands often are, spins until it
		// has used 2 s of CPU (200 clock ticks), however loaded the
		// machine is.
		busy := `x=$(bash -c 'awk "BEGIN { while (1) { for (i = 0; i < 1e5; i++); getline l < \"/proc/self/stat\"; close(\"/proc/self/stat\"); split(l, f, \" \"); if (f[14] + f[15] >= 200) exit } }"')`
		code, lines := script("ci_step idle\nsleep 2\nci_step busy\n" + busy + "\nci_end\n")
		Expect(code).To(Equal(0))
		m := regexp.MustCompile(`: idle (\d+)s/(\d+)s cpu, busy \d+s/(\d+)s cpu$`).FindStringSubmatch(lines[len(lines)-1])
		Expect(m).NotTo(BeNil(), lines[len(lines)-1])
		n := func(i int) int { v, err := strconv.Atoi(m[i]); Expect(err).NotTo(HaveOccurred()); return v }
		Expect(n(1)).To(BeNumerically(">=", 2))
		Expect(n(2)).To(BeNumerically("<=", 1), "sleeping is not CPU time")
		Expect(n(3)).To(BeNumerically(">=", 2))
		Expect(n(3)).To(BeNumerically("<=", 3))
	})

	It("says which step failed, with its exit code, and stops there", func() {
		code, lines := script("ci_step a\nci_step 'go vet'\n(exit 3)\nci_step never\nci_end\n")
		Expect(code).To(Equal(3))
		Expect(lines).NotTo(ContainElement("== never"))
		Expect(lines[len(lines)-1]).To(MatchRegexp(`^t: FAIL: step "go vet" failed \(exit 3\) after \d+s \(\d+s cpu\); passed before it: a \d+s/\d+s cpu$`))
	})

	It("names a failure in a pipeline, and one in the first step", func() {
		code, lines := script("ci_step tests\nfalse | tee /dev/null\nci_end\n")
		Expect(code).To(Equal(1))
		Expect(lines[len(lines)-1]).To(MatchRegexp(`^t: FAIL: step "tests" failed \(exit 1\) after \d+s \(\d+s cpu\); passed before it: none$`))
	})

	It("is what ci/test.sh uses: it begins with ci_begin and ends with ci_end", func() {
		b, err := os.ReadFile("test.sh")
		Expect(err).NotTo(HaveOccurred())
		text := strings.TrimRight(string(b), "\n")
		Expect(text).To(ContainSubstring("source ci/steps.sh\nci_begin ci/test.sh\n"))
		Expect(text).To(HaveSuffix("\nci_end"))
		Expect(text).NotTo(MatchRegexp(`(?m)^\s*echo "== `), "every step is a ci_step")
	})
})
