// Package ci_test tests the CI scripts' shared shell code (steps.sh).
package ci_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestCI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "CI Scripts Suite")
}
