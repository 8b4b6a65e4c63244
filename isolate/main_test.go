package isolate_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/rextio/rxeq/isolate"
)

// workerEnv makes the test binary serve the worker protocol instead of
// running the tests: the suite's executors re-execute the binary with it.
const workerEnv = "RXEQ_ISOLATE_TEST_WORKER=1"

func TestMain(m *testing.M) {
	if os.Getenv("RXEQ_ISOLATE_TEST_WORKER") == "1" {
		if err := isolate.ServeStdio(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
