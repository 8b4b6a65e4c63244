package rxginkgo_test

import (
	. "github.com/onsi/ginkgo/v2"

	"github.com/rextio/rxeq/rxginkgo"
)

// The project's own end-to-end suite: every built-in scenario, function
// and batch through oracle, fallback and forced native, locks included.
var _ = Describe("the built-in catalog", Label("e2e"), func() {
	rxginkgo.Table("agrees across executors")
})
