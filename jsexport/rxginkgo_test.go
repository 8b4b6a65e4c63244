package jsexport_test

import (
	. "github.com/onsi/ginkgo/v2"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/jsexport"
	"github.com/rextio/rxeq/rxginkgo"
)

// A user's ginkgo suite naming the TensorFlow.js executors: every entry
// of the reference and runtime-error scenarios on tfjs-cpu and tfjs-wasm
// (skipped without node and the packages, failed under RXEQ_REQUIRE_TFJS).
var suiteExecutors = func() []executor.Executor {
	var out []executor.Executor
	for _, name := range both {
		e, err := jsexport.NewExecutor(name, opts())
		if err != nil {
			panic(err)
		}
		out = append(out, e)
	}
	return out
}()

var _ = Describe("the TensorFlow.js executors in a user's rxginkgo table", Ordered, Label("e2e", "tfjs"), func() {
	BeforeAll(needTFJS)
	AfterAll(func() { executor.CloseAll(suiteExecutors) })

	rxginkgo.TableWith("agree with the oracle", rxginkgo.WithExecutors(suiteExecutors...),
		"../scenarios/reference.rx", "../scenarios/error.rx")
})
