//go:build cgo

package native_test

import (
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native"
)

var _ = Describe("a build with cgo", func() {
	It("reports native code available", func() {
		Expect(native.Available()).To(Succeed())
	})
})

// ulp returns the distance in float32 units in the last place (for the
// specs that run compiled code, all built with cgo only).
func ulp(a, b float32) int64 {
	if a == b {
		return 0
	}
	if math.IsNaN(float64(a)) || math.IsNaN(float64(b)) {
		return math.MaxInt64
	}
	ord := func(f float32) int64 {
		u := int64(math.Float32bits(f))
		if u&(1<<31) != 0 {
			return -(u &^ (1 << 31))
		}
		return u
	}
	d := ord(a) - ord(b)
	if d < 0 {
		return -d
	}
	return d
}
