package irtest_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program/ir/irtest"
)

var _ = Describe("CountAssignedInBody", func() {
	It("is a loop whose body assigns its own count", func() {
		Expect(irtest.CountAssignedInBody().String()).To(Equal(`func f(%n.0 int64, %x.1 [B]float32) (%iters.2 int64, %y.3 [B]float32) { // t.rx:1:1
	%iters.2 = consti 0 : int64
	%y.3 = copy %x.1 : [B]float32
	%count.4 = copy %n.0 : int64
	%5 = consti 1 : int64
	%6 = constf 1 : float32
	for %i.7 = range %count.4 { // t.rx:5:2
		%iters.2 = iadd %iters.2, %5 : int64
		%y.3 = add %y.3, %6 : [B]float32
		%count.4 = iadd %count.4, %5 : int64
	}
}
`))
	})
})
