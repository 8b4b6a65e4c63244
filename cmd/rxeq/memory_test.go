package main

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the memory budget and the batch limit", Label("e2e"), func() {
	It("refuses --batch above the //rx:batches limit", func() {
		code, _, errOut := rxeq("run", "--batch", "1000000000", "testdata/badlock.rx")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("rxeq run: --batch 1000000000: at most 16777216, the limit of //rx:batches"))
		code, _, _ = rxeq("run", "--backend", "oracle,fallback", "--batch", "16777216", "--max-memory", "1MiB", "testdata/badlock.rx")
		Expect(code).To(Equal(1), "the largest batch is accepted, and refused by the budget")
	})

	It("parses --max-memory and rejects garbage", func() {
		for _, bad := range []string{"lots", "4 gigs", "-1GiB", "0", ""} {
			code, _, errOut := rxeq("run", "--max-memory", bad, "testdata/badlock.rx")
			Expect(code).To(Equal(2), bad)
			Expect(errOut).To(ContainSubstring(`invalid argument "`+bad+`" for "--max-memory" flag`), bad)
		}
		for _, cmd := range []string{"fuzz", "reduce"} {
			code, _, errOut := rxeq(cmd, "--max-memory", "lots", "testdata/badlock.rx")
			Expect(code).To(Equal(2), cmd)
			Expect(errOut).To(ContainSubstring(`invalid argument "lots" for "--max-memory" flag`), cmd)
		}
		for _, good := range []string{"4GiB", "512MiB", "off", "2GB"} {
			code, out, errOut := rxeq("run", "--backend", "oracle,fallback", "--max-memory", good, "testdata/badlock.rx")
			Expect(code).To(Equal(1), "%s: %s%s", good, out, errOut) // badlock's lock fails
			Expect(out).To(ContainSubstring(" 0 errors;"), good)
		}
	})

	It("fails the cases over the budget with what they need and goes on with the others", func() {
		code, out, _ := rxeq("run", "--backend", "oracle,fallback", "--max-memory", "1GiB",
			"../../harness/testdata/memory/big_batch.rx", "../../harness/testdata/memory/huge_dims.rx", "../../scenarios/rounds.rx")
		Expect(code).To(Equal(1))
		Expect(out).To(MatchRegexp(`big-batch\s+score\s+16777216\s+fallback\s+ERROR`))
		Expect(out).To(MatchRegexp(`--- ERROR big-batch/score/b16777216/fallback\n    memory budget exceeded: score at batch 16777216 needs [0-9.]+ GiB \(generated inputs 32.0 GiB;`))
		Expect(out).To(ContainSubstring("but the memory budget is 1.0 GiB; raise it with --max-memory"))
		Expect(out).To(MatchRegexp(`--- ERROR huge-dims/score/b1/oracle\n    memory budget exceeded: score at batch 1 needs [0-9.]+ TiB \(generated inputs 4.0 TiB;`))
		Expect(out).To(MatchRegexp(`rounds\S*\s+\S+\s+\d+\s+fallback\s+\S+\s+PASS`))
		Expect(out).To(MatchRegexp(`\d+ passed, 0 failed, 4 errors`))
	})

	It("makes rxeq reduce refuse a reproducer over the budget", func() {
		code, _, errOut := rxeq("reduce", "--executors", "oracle,fallback", "--max-memory", "1GiB", "../../harness/testdata/memory/big_batch.rx")
		Expect(code).To(Equal(1))
		Expect(errOut).To(ContainSubstring("memory budget exceeded: score at batch 16777216 needs"))
		Expect(errOut).To(ContainSubstring("oracle noise run"))
	})
})
