package repro_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRepro(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Repro Suite")
}
