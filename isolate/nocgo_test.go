//go:build !cgo

package isolate_test

import (
	"context"
	"errors"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
)

// In a build without cgo (CGO_ENABLED=0 go test) the specs labelled
// native, which compile and call C, are skipped with the reason.
var _ = BeforeEach(func() {
	if err := native.Available(); err != nil && slices.Contains(CurrentSpecReport().Labels(), "native") {
		Skip(err.Error())
	}
})

var _ = Describe("a worker built without cgo", func() {
	It("fails Prepare with native.ErrUnavailable, its text and kind kept across the pipe", func() {
		f, p := load("testdata/two.rx")
		pr, err := workerExecutor("").Prepare(context.Background(), f, p)
		Expect(pr).To(BeNil())
		Expect(errors.Is(err, native.ErrUnavailable)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(native.ErrUnavailable.Error()))
	})
})
