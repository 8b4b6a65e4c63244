package selftest_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestSelftest(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Selftest Suite")
}
