package ci_test

import (
	"errors"
	"os"
	"os/exec"
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
	It("ends a passing script with one line naming every step and the wall time", func() {
		code, lines := script("ci_step a\necho work\nci_step 'b c'\nci_note '3 packages'\nci_end\n")
		Expect(code).To(Equal(0))
		Expect(lines).To(Equal([]string{"== a", "work", "== b c", lines[3]}))
		Expect(lines[3]).To(MatchRegexp(`^t: PASS: 2 steps in \d+s: a, b c \(3 packages\)$`))
	})

	It("says which step failed, with its exit code, and stops there", func() {
		code, lines := script("ci_step a\nci_step 'go vet'\n(exit 3)\nci_step never\nci_end\n")
		Expect(code).To(Equal(3))
		Expect(lines).NotTo(ContainElement("== never"))
		Expect(lines[len(lines)-1]).To(MatchRegexp(`^t: FAIL: step "go vet" failed \(exit 3\) after \d+s; passed before it: a$`))
	})

	It("names a failure in a pipeline, and one in the first step", func() {
		code, lines := script("ci_step tests\nfalse | tee /dev/null\nci_end\n")
		Expect(code).To(Equal(1))
		Expect(lines[len(lines)-1]).To(MatchRegexp(`^t: FAIL: step "tests" failed \(exit 1\) after \d+s; passed before it: none$`))
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
