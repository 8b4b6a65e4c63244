package main

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRxeq(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rxeq Command Suite")
}
