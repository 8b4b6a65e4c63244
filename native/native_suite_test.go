package native_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// helperEnv makes the test binary act as a second process that builds and
// runs testdata/boundary.rx (for the concurrent-build test), with the
// compiler and the cache its parent gives in $CC and $RXEQ_CACHE: the
// helper is a command, and reads its configuration at its edge, as rxeq
// does.
const helperEnv = "RXEQ_NATIVE_TEST_HELPER"

func TestNative(t *testing.T) {
	if os.Getenv(helperEnv) == "build" {
		os.Exit(helperBuild())
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Native Suite")
}

func helperBuild() int {
	src, err := os.ReadFile("testdata/boundary.rx")
	if err == nil {
		var f *program.File
		if f, err = program.Parse("boundary.rx", src); err == nil {
			p, _ := program.Lower(f)
			var prog *native.Program
			if prog, err = native.Compile(context.Background(), p, native.Options{CC: os.Getenv("CC"), CacheDir: os.Getenv("RXEQ_CACHE")}); err == nil {
				defer prog.Close()
				in := map[string]*tensor.Tensor{"x": tensor.NewFloat32(1, 2), "y": tensor.NewFloat32(1), "k": tensor.Scalar(1)}
				_, err = prog.Run(context.Background(), "two", in)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ok")
	return 0
}
