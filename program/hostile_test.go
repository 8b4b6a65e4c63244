package program_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program"
)

// The reproducers of testdata/hostile, checked as `rxeq check` does; they
// are FuzzParse seeds too.
var _ = DescribeTable("the hostile reproducers in testdata/hostile",
	func(name, want string) {
		path := filepath.Join("testdata/hostile", name)
		src, err := program.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		_, err = program.ParseScenario(path, src)
		if want == "" {
			Expect(err).NotTo(HaveOccurred())
			return
		}
		Expect(err).To(MatchError(HavePrefix(path + ":" + want)))
	},
	Entry(nil, "overflow_const.rx", "8:8: shape [B][4611686018427387904][4]float32 of parameter x has 128 × 4611686018427387904 × 4 ≈ 2^71 elements at batch B = 128"),
	Entry(nil, "overflow_batches.rx", "6:8: shape [B][1073741824][268435456]float32 of parameter x has 16 × 1073741824 × 268435456 ≈ 2^62 elements at batch B = 16"),
	Entry(nil, "overflow_product.rx", "7:20: shape [1073741824][2147483648]float32 of the result of * has 1073741824 × 2147483648 ≈ 2^61 elements"),
	Entry(nil, "nested_tanh_10000.rx", "5:1281: expression nests more than 256 deep here"),
	Entry(nil, "flat_sum_10000.rx", ""),
	Entry(nil, "package_only.rx", "1:1: no scoring function"),
	Entry(nil, "second_symbol.rx", "4:14: symbolic dimension K of f has no value when it runs"),
	Entry(nil, "missing_input.rx", "4:25: parameter w of f has no //rx:input directive"),
	Entry(nil, "int64_above_2_53.rx", "2:1: //rx:input n: an int64 parameter takes const(N) with an integer N between -2^53 and 2^53"),
	Entry(nil, "range_negative.rx", ""),
)

var _ = It("has an entry for every file of testdata/hostile", func() {
	entries, err := os.ReadDir("testdata/hostile")
	Expect(err).NotTo(HaveOccurred())
	Expect(entries).To(HaveLen(10))
})
