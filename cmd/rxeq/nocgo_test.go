//go:build !cgo

package main

import (
	"slices"

	. "github.com/onsi/ginkgo/v2"

	"github.com/rextio/rxeq/native"
)

// In a build without cgo (CGO_ENABLED=0 go test) the specs labelled
// native, which compile and call C, are skipped with the reason.
var _ = BeforeEach(func() {
	if err := native.Available(); err != nil && slices.Contains(CurrentSpecReport().Labels(), "native") {
		Skip(err.Error())
	}
})
