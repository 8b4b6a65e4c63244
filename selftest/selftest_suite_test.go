package selftest_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/selftest"
)

// TestMain lets the test binary be the hostile executor, as rxeq is with
// `rxeq selftest-executor --misbehave KIND`: the external canaries start
// os.Executable() with those arguments.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == selftest.HostileArg {
		fs := flag.NewFlagSet(selftest.HostileArg, flag.ExitOnError)
		kind := fs.String("misbehave", "ok", "")
		_ = fs.Parse(os.Args[2:])
		if err := selftest.ServeHostile(context.Background(), os.Stdin, os.Stdout, *kind); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestSelftest(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Selftest Suite")
}
