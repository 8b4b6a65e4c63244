package harness_test

import (
	"os"
	"testing"

	"github.com/rextio/rxeq/harness"
)

// TestMain makes the test binary a (breakable) external executor when
// $RXEQ_FAKE_EXECUTOR is set: the external executor specs run it as their
// subprocess.
func TestMain(m *testing.M) {
	if mode := os.Getenv(harness.FakeExecutorEnv); mode != "" {
		os.Exit(harness.ServeFakeExecutor(mode))
	}
	os.Exit(m.Run())
}
