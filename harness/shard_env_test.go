package harness_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/harness"
)

var _ = Describe("ShardFromEnv", func() {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}

	It("reads Bazel's 0-based index and touches the shard status file", func() {
		status := filepath.Join(GinkgoT().TempDir(), "shard-status")
		sh, from, err := harness.ShardFromEnv(env("TEST_TOTAL_SHARDS", "4", "TEST_SHARD_INDEX", "0", "TEST_SHARD_STATUS_FILE", status))
		Expect(err).NotTo(HaveOccurred())
		Expect(from).To(Equal("bazel"))
		Expect(sh).To(Equal(harness.Shard{Index: 1, Total: 4}))
		_, err = os.Stat(status)
		Expect(err).NotTo(HaveOccurred())
	})

	It("reads GitLab's 1-based index", func() {
		sh, from, err := harness.ShardFromEnv(env("CI_NODE_TOTAL", "3", "CI_NODE_INDEX", "3"))
		Expect(err).NotTo(HaveOccurred())
		Expect(from).To(Equal("gitlab"))
		Expect(sh).To(Equal(harness.Shard{Index: 3, Total: 3}))
	})

	It("runs everything without the variables, or with one shard", func() {
		sh, _, err := harness.ShardFromEnv(env())
		Expect(err).NotTo(HaveOccurred())
		Expect(sh).To(Equal(harness.Shard{}))
		sh, _, err = harness.ShardFromEnv(env("CI_NODE_TOTAL", "1", "CI_NODE_INDEX", "1"))
		Expect(err).NotTo(HaveOccurred())
		Expect(sh).To(Equal(harness.Shard{}))
	})

	DescribeTable("rejects malformed variables, naming them",
		func(want string, kv ...string) {
			_, _, err := harness.ShardFromEnv(env(kv...))
			Expect(err).To(MatchError(harness.ErrOptions))
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("Bazel index past the total", `TEST_SHARD_INDEX="4": want 0 to 3`, "TEST_TOTAL_SHARDS", "4", "TEST_SHARD_INDEX", "4"),
		Entry("GitLab index 0", `CI_NODE_INDEX="0": want 1 to 2`, "CI_NODE_TOTAL", "2", "CI_NODE_INDEX", "0"),
		Entry("a total that is not a number", `CI_NODE_TOTAL="x"`, "CI_NODE_TOTAL", "x", "CI_NODE_INDEX", "1"),
	)
})
