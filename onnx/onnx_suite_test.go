package onnx_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestONNX(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ONNX Suite")
}
