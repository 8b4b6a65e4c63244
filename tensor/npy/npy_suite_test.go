package npy_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestNPY(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "npy")
}
