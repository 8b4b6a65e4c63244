package lock_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/lock"
	"github.com/rextio/rxeq/program"
)

const lockedRx = `package scoring

func score(x [B][4]float32) (y [B][4]float32) {
	y = x
	for round_idx := range 4 {
		//rx:lock "for (int64_t round_idx = 0; round_idx < 4; round_idx++)"
		//rx:lock ` + "`rx_checked_rem\\(round_idx, 2`" + `
		//rx:lock-not "goto"
		if CheckedRem(round_idx, 2) == 0 {
			y = Tanh(y)
		}
	}
	return
}
`

// Hand-written C: the decoy holds the locked loop, score's body does not.
const lockedC = `static int rx_decoy(void) {
	for (int64_t round_idx = 0; round_idx < 4; round_idx++) { rx_checked_rem(round_idx, 2, &r); }
	return 0;
}
int rx_score(const float *x, float *y) {
	for (int64_t round_idx = 0; round_idx < 4; round_idx++) {
		if (rx_checked_rem(round_idx, 2, &r) != 0) goto fail;
	}
	return 0;
fail:
	return 1;
}
int rx_other(const float *x, float *y) {
	for (int64_t k = 0; k < 4; k++) { }
	return 0;
}
`

var _ = Describe("Check on locks parsed from .rx", func() {
	It("applies a parsed function's locks to its own C body only", func() {
		f, err := program.Parse("locked.rx", []byte(lockedRx))
		Expect(err).NotTo(HaveOccurred())
		locks := f.Func("score").Locks
		Expect(locks).To(HaveLen(3))

		r := lock.Check([]byte(lockedC), "rx_score", locks)
		Expect(r.Checks[0].OK).To(BeTrue())
		Expect(r.Checks[1].OK).To(BeTrue())
		Expect(r.Checks[2].OK).To(BeFalse()) // the goto
		Expect(r.Message).To(ContainSubstring(`//rx:lock-not "goto" (locked.rx:8:3)`))

		other := lock.Check([]byte(lockedC), "rx_other", locks[:2])
		Expect(other.OK).To(BeFalse())
		Expect(other.Message).To(ContainSubstring(">>   14 | \tfor (int64_t k = 0; k < 4; k++) { }"))
	})
})
