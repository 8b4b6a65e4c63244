package main

import (
	"bytes"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/harness"
)

var _ = Describe("run progress", func() {
	groupOf := func(status harness.Status) []harness.Case {
		return []harness.Case{
			{Scenario: "s", Function: "f", Batch: 8, Executor: "oracle", Status: harness.StatusPass},
			{Scenario: "s", Function: "f", Batch: 8, Executor: "native", Status: status},
		}
	}

	It("writes a plain line per tenth of the groups when not on a terminal", func() {
		var b bytes.Buffer
		p := newProgress(&b, false, 0)
		for i := 1; i <= 69; i++ {
			status := harness.StatusPass
			if i == 30 {
				status = harness.StatusFail
			}
			p.group(i, 69, groupOf(status))
		}
		p.finish()
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		Expect(lines).To(HaveLen(10))
		Expect(lines[0]).To(MatchRegexp(`^rxeq run: 10% \(7/69 groups, 14 cases, 0 failed\) [0-9.]+s$`))
		Expect(lines[9]).To(MatchRegexp(`^rxeq run: 100% \(69/69 groups, 138 cases, 1 failed\) [0-9.]+s$`))
		Expect(b.String()).NotTo(ContainSubstring("s/f"), "no case named")
	})

	It("draws the bar, says preparing before the first group, and cuts the line to the terminal", func() {
		var b bytes.Buffer
		p := &progress{w: &b, tty: true, width: 60, start: time.Now()}
		p.draw()
		Expect(b.String()).To(MatchRegexp(`^\r\033\[K\[> {23}\] preparing  [0-9.]+s$`))
		b.Reset()
		p.width = 40
		p.group(1, 2, groupOf(harness.StatusError))
		Expect(b.String()).To(Equal("\r\033[K[============>           ] 1/2 groups"))
		b.Reset()
		p.width = 200
		p.draw()
		Expect(b.String()).To(MatchRegexp(`^\r\033\[K\[============>           \] 1/2 groups  1 failed  [0-9.]+s  s/f b8$`))
	})
})
