package pyexport_test

import (
	"flag"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// update rewrites the golden files: go test ./pyexport -run TestPyExport -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func TestPyExport(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "PyExport Suite")
}
