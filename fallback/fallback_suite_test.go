package fallback_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestFallback(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Fallback Suite")
}
