package external_test

import (
	"os"
	"testing"

	"github.com/rextio/rxeq/external"
)

// TestMain makes the test binary a (breakable) external executor when
// $RXEQ_FAKE_EXECUTOR is set: the external executor specs run it as their
// subprocess.
func TestMain(m *testing.M) {
	if mode := os.Getenv(external.FakeExecutorEnv); mode != "" {
		os.Exit(external.ServeFakeExecutor(mode))
	}
	if pidFile := os.Getenv(parentEnv); pidFile != "" {
		os.Exit(serveParent(pidFile))
	}
	os.Exit(m.Run())
}
