package external_test

import (
	"os"
	"testing"

	"github.com/rextio/rxeq/external"
	"github.com/rextio/rxeq/internal/subproc"
)

// TestMain makes the test binary a (breakable) external executor when
// $RXEQ_FAKE_EXECUTOR is set: the external executor specs run it as their
// subprocess.
func TestMain(m *testing.M) {
	if mode := os.Getenv(external.FakeExecutorEnv); mode != "" {
		os.Exit(external.ServeFakeExecutor(mode))
	}
	// As rxeq's main does: what the executors leave behind is re-parented
	// here (see the setsid specs).
	_ = subproc.BecomeSubreaper()
	if pidFile := os.Getenv(parentEnv); pidFile != "" {
		os.Exit(serveParent(pidFile))
	}
	os.Exit(m.Run())
}
