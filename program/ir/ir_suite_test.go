package ir_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestIR(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "IR Suite")
}
