package rxginkgo_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRxginkgo(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rxginkgo Suite")
}
