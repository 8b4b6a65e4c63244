package ort_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/onnx/ort"
	"github.com/rextio/rxeq/program"
)

// TestTelemetryChild is the child process of the telemetry spec below: it
// opens the library, creates and closes one session and writes its pid to
// $RXEQ_ORT_TELEMETRY_PID. It does nothing when run as part of the suite.
func TestTelemetryChild(t *testing.T) {
	pidFile := os.Getenv("RXEQ_ORT_TELEMETRY_PID")
	if pidFile == "" {
		t.Skip("the child of the telemetry spec")
	}
	lib, err := ort.Find(libPath())
	if err != nil {
		t.Fatal(err)
	}
	f, err := program.Parse("t.rx", []byte("package t\n\nfunc f(x [B]float32) (y [B]float32) {\n\treturn Tanh(x)\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := program.Lower(f)
	if err != nil {
		t.Fatal(err)
	}
	model, err := onnx.Export(p, "f", onnx.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := lib.NewSession(model, []string{"x"}, []string{"y"}, ort.SessionOptions{Level: ort.Optimize})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		t.Fatal(err)
	}
}

var _ = Describe("ONNX Runtime's telemetry", func() {
	// ONNX Runtime 1.30's Linux build records telemetry unless
	// ORT_DISABLE_TELEMETRY=1 is set before it initializes: a device id
	// under $HOME/.cache/Microsoft and /tmp/mat-debug-PID.log, a file per
	// process that it never removes. Open sets the variable unless the
	// user has; the spec runs a child with and without the user's own
	// ORT_DISABLE_TELEMETRY=0, which shows that the check can fail.
	//
	// The library also skips telemetry on its own when it sees a CI
	// system's variable (ciVars, read from the 1.30 library's strings and
	// checked one by one: CI=true alone turns it off). The child runs
	// without them, or the control below would fail on every CI machine.
	ciVars := []string{"CI", "TF_BUILD", "GITHUB_ACTIONS", "GITLAB_CI", "CIRCLECI", "TRAVIS",
		"JENKINS_URL", "CODEBUILD_BUILD_ID", "BUILDKITE", "TEAMCITY_VERSION", "APPVEYOR", "BITBUCKET_BUILD_NUMBER"}
	dropped := func(kv string) bool {
		for _, k := range append([]string{ort.TelemetryEnv, "HOME", "RXEQ_ORT_LIB"}, ciVars...) {
			if strings.HasPrefix(kv, k+"=") {
				return true
			}
		}
		return false
	}
	child := func(env ...string) (pid int, home string) {
		GinkgoHelper()
		lib := needLibrary()
		dir := GinkgoT().TempDir()
		home = filepath.Join(dir, "home")
		Expect(os.Mkdir(home, 0o700)).To(Succeed())
		pidFile := filepath.Join(dir, "pid")
		self, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())
		cmd := exec.Command(self, "-test.run", "^TestTelemetryChild$")
		for _, kv := range os.Environ() {
			if !dropped(kv) {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "HOME="+home, "RXEQ_ORT_LIB="+lib.Path(), "RXEQ_ORT_TELEMETRY_PID="+pidFile)
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		b, err := os.ReadFile(pidFile)
		Expect(err).NotTo(HaveOccurred())
		pid, err = strconv.Atoi(string(b))
		Expect(err).NotTo(HaveOccurred())
		return pid, home
	}
	matDebug := func(pid int) string { return fmt.Sprintf("/tmp/mat-debug-%d.log", pid) }

	It("is off: no device id, no file left in /tmp", func() {
		pid, home := child()
		Expect(matDebug(pid)).NotTo(BeAnExistingFile())
		Expect(filepath.Join(home, ".cache", "Microsoft")).NotTo(BeADirectory())
	})

	It("stays on when the user asks for it (so the check above can fail)", func() {
		pid, home := child(ort.TelemetryEnv + "=0")
		DeferCleanup(func() { _ = os.Remove(matDebug(pid)) })
		Expect(matDebug(pid)).To(BeAnExistingFile())
		Expect(filepath.Join(home, ".cache", "Microsoft")).To(BeADirectory())
	})
})
