package harness_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

const sqSrc = `//rx:scenario sq
//rx:input x normal(0, 1)
package sq

func sq(x [B][4]float32) (y [B][4]float32) {
	y = x * x + 1
	return
}
`

// estimate lowers f and estimates fn at batch through execs.
func estimate(f *program.File, fn string, batch int, execs ...executor.Executor) harness.MemoryEstimate {
	GinkgoHelper()
	p, err := program.Lower(f)
	Expect(err).NotTo(HaveOccurred())
	return harness.EstimateMemory(f.Func(fn), p.Func(fn), batch, nil, execs)
}

var _ = Describe("EstimateMemory", func() {
	It("counts inputs, outputs and intermediates per executor at its element size", func() {
		// sq at batch 4: x and y hold 16 elements; the IR's values are
		// y, x*x, the constant 1 (rank 0) and the sum.
		m := estimate(parseRx("sq.rx", sqSrc), "sq", 4, oracle.Executor{}, fallback.Executor{})
		Expect(m.Overflow).To(BeFalse())
		Expect(m.Inputs).To(Equal(uint64(16 * 4)))
		Expect(m.Executors).To(Equal([]harness.Footprint{
			// float64: its float32 copy and the widened one; y; three
			// [4][4] values and a scalar, twice, plus 128 bytes each.
			{Executor: "oracle", Inputs: 64 + 128, Outputs: 128, Intermediates: 3*(2*128+128) + (2*8 + 128)},
			// float32, reading its copy in place.
			{Executor: "fallback", Inputs: 64, Outputs: 64, Intermediates: 3*(2*64+128) + (2*4 + 128)},
			// A failing case runs the oracle again, rounding to float32.
			{Executor: "oracle rounded for the blame", Inputs: 64 + 128, Outputs: 128, Intermediates: 3*(2*128+128) + (2*8 + 128)},
		}))
		Expect(m.Total).To(Equal(uint64(64 + 2*(192+128+1296) + (64 + 64 + 904))))
		Expect(harness.CheckMemory(m, int64(m.Total))).To(Succeed())
		Expect(harness.CheckMemory(m, -1)).To(Succeed())
		err := harness.CheckMemory(m, int64(m.Total)-1)
		Expect(errors.Is(err, harness.ErrMemory)).To(BeTrue())
		Expect(err.Error()).To(HavePrefix("memory budget exceeded: sq at batch 4 needs 4.2 KiB (generated inputs 64 B; oracle 1.6 KiB = inputs 192 B, outputs 128 B, intermediates 1.3 KiB; fallback 1.0 KiB"))
		Expect(err.Error()).To(ContainSubstring("but the memory budget is 4.2 KiB; raise it with --max-memory"))
	})

	It("grows linearly with the batch", func() {
		f := parseRx("sq.rx", sqSrc)
		a := estimate(f, "sq", 1000, fallback.Executor{})
		b := estimate(f, "sq", 2000, fallback.Executor{})
		Expect(b.Total - a.Total).To(Equal(a.Total - estimate(f, "sq", 0, fallback.Executor{}).Total))
	})

	It("reports an overflowing size instead of wrapping around", func() {
		// The checker now refuses testdata/memory/overflow_dims.rx (its
		// element count overflows); a library caller's batch can still
		// overflow a shape the checker sized at the file's batches.
		f := parseRx("sq.rx", sqSrc)
		m := estimate(f, "sq", math.MaxInt, oracle.Executor{})
		Expect(m.Overflow).To(BeTrue())
		Expect(m.Total).To(Equal(uint64(math.MaxUint64)))
		err := harness.CheckMemory(m, 1<<62)
		Expect(errors.Is(err, harness.ErrMemory)).To(BeTrue())
		Expect(err.Error()).To(ContainSubstring("needs more than 16 EiB (a size overflows 64 bits)"))
	})
})

// load parses a .rx file.
func load(path string) *program.File {
	GinkgoHelper()
	src, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	return parseRx(path, string(src))
}

var _ = Describe("the memory budget", func() {
	It("fails the groups over the budget with what they need, and runs the others", func() {
		f := tinyFile()
		est := func(fn string, b int) uint64 {
			return estimate(f, fn, b, oracle.Executor{}, fallback.Executor{}).Total
		}
		limit := max(est("lin", 4), est("sq", 9))
		Expect(est("lin", 9)).To(BeNumerically(">", limit))
		opts := onlyFallback()
		opts.MaxMemory = int64(limit)
		opts.SkipLocks = true
		res, err := harness.Run(context.Background(), []*program.File{f}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Cases).To(HaveLen(12))
		for _, c := range res.Cases {
			if c.Function == "lin" && c.Batch == 9 {
				Expect(c.Status).To(Equal(harness.StatusError), c.Name())
				Expect(c.Message).To(HavePrefix("memory budget exceeded: lin at batch 9 needs "), c.Name())
				Expect(c.Message).To(ContainSubstring("raise it with --max-memory"))
				continue
			}
			Expect(c.Status).To(Equal(harness.StatusPass), "%s: %s", c.Name(), c.Message)
		}
	})

	It("turns the issue's reproducers into failed cases, not a fatal out-of-memory error", func() {
		paths, err := filepath.Glob("testdata/memory/*.rx")
		Expect(err).NotTo(HaveOccurred())
		Expect(paths).To(HaveLen(3))
		var files []*program.File
		for _, p := range paths {
			if filepath.Base(p) == "overflow_dims.rx" {
				// Its element count overflows int64: the checker refuses it
				// before any case exists.
				src, err := os.ReadFile(p)
				Expect(err).NotTo(HaveOccurred())
				_, err = program.Parse(p, src)
				Expect(err).To(MatchError(ContainSubstring("more than the 2^60 - 1 a tensor may hold")))
				continue
			}
			files = append(files, load(p))
		}
		files = append(files, tinyFile())
		opts := onlyFallback()
		opts.MaxMemory = 1 << 30
		res, err := harness.Run(context.Background(), files, opts)
		Expect(err).NotTo(HaveOccurred())
		pass, _, errored := res.Counts()
		Expect(errored).To(Equal(4), "two cases per reproducer")
		Expect(pass).To(Equal(12), "the tiny scenario still runs")
		for _, c := range res.Cases {
			if c.Status == harness.StatusError {
				Expect(c.Message).To(HavePrefix("memory budget exceeded: score at batch "), c.Name())
				Expect(c.Message).To(ContainSubstring("but the memory budget is 1.0 GiB"))
			}
		}
	})

	It("refuses batches above the //rx:batches limit", func() {
		opts := onlyFallback()
		opts.Batches = []int{harness.MaxBatch + 1}
		_, err := harness.Run(context.Background(), []*program.File{tinyFile()}, opts)
		Expect(errors.Is(err, harness.ErrOptions)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("batch 16777217: want 1 to 16777216"))
		// The same limit as the checker's.
		_, err = program.Parse("b.rx", []byte("//rx:batches 16777217\npackage b\n"))
		Expect(err).To(HaveOccurred())
		_, err = program.Parse("b.rx", []byte("//rx:batches 16777216\npackage b\n"))
		Expect(err).NotTo(HaveOccurred())
	})

	It("defaults to a part of the machine's memory", func() {
		d := harness.DefaultMaxMemory()
		Expect(d).To(BeNumerically(">=", 1<<20))
		Expect(d).To(BeNumerically("<", int64(1)<<50))
	})
})

var _ = DescribeTable("ParseBytes",
	func(in string, want int64) {
		got, err := harness.ParseBytes(in)
		if want < 0 {
			Expect(errors.Is(err, harness.ErrOptions)).To(BeTrue(), "%q gave %d, %v", in, got, err)
			return
		}
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(want))
	},
	Entry(nil, "4GiB", int64(4<<30)),
	Entry(nil, "512MiB", int64(512<<20)),
	Entry(nil, "512 mib", int64(512<<20)),
	Entry(nil, "1.5GiB", int64(3<<29)),
	Entry(nil, "2GB", int64(2e9)),
	Entry(nil, "64KiB", int64(64<<10)),
	Entry(nil, "1TiB", int64(1<<40)),
	Entry(nil, "1048576", int64(1<<20)),
	Entry(nil, "100B", int64(100)),
	Entry(nil, "", int64(-1)),
	Entry(nil, "GiB", int64(-1)),
	Entry(nil, "4 gigs", int64(-1)),
	Entry(nil, "-4GiB", int64(-1)),
	Entry(nil, "0", int64(-1)),
	Entry(nil, "1.2.3MiB", int64(-1)),
	Entry(nil, "9EiB", int64(-1)),
	Entry(nil, "99999999TiB", int64(-1)),
	Entry(nil, "0x10", int64(-1)),
)

var _ = Describe("groups running at once", func() {
	It("share the budget: a group waits until its estimate fits beside the others'", func() {
		f := parseRx("sq.rx", "//rx:batches 8 9 10\n"+sqSrc)
		var mu sync.Mutex
		active, most := 0, 0
		slow := hookExecutor{name: "slow", inner: fallback.Executor{},
			before: func(context.Context, string, map[string]*tensor.Tensor) error {
				mu.Lock()
				active++
				most = max(most, active)
				mu.Unlock()
				time.Sleep(50 * time.Millisecond)
				mu.Lock()
				active--
				mu.Unlock()
				return nil
			}}
		est := func(b int) uint64 { return estimate(f, "sq", b, oracle.Executor{}, slow).Total }
		Expect(est(10)).To(BeNumerically("<", 2*est(8)), "one group at a time fits")
		opts := harness.Options{Executors: []executor.Executor{slow}, Parallel: 3, SkipLocks: true}

		opts.MaxMemory = int64(est(10))
		res, err := harness.Run(context.Background(), []*program.File{f}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.OK()).To(BeTrue())
		Expect(most).To(Equal(1))

		most = 0
		opts.MaxMemory = int64(est(8) + est(9) + est(10))
		res, err = harness.Run(context.Background(), []*program.File{f}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.OK()).To(BeTrue())
		Expect(most).To(BeNumerically(">", 1))
	})
})
