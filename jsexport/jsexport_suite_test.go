package jsexport_test

import (
	"flag"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// update rewrites the golden files: go test ./jsexport -run TestJSExport -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func TestJSExport(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "JSExport Suite")
}
