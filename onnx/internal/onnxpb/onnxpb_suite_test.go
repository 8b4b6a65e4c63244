package onnxpb_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestONNXPB(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ONNX protobuf Suite")
}
