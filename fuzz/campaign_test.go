package fuzz_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// tanhChecker compares the oracle with an executor off by 0.01 on every
// function that has a Tanh of a rank-2 argument.
func tanhChecker() *fuzz.Checker {
	return &fuzz.Checker{Executors: []executor.Executor{skewed{name: "skewed", trigger: hasTanhOfRank2, delta: 0.01}}}
}

// elapsedNote matches the reduction time of a FOUND line.
var elapsedNote = regexp.MustCompile(`, [0-9.]+(ms|s|µs)\)`)

// session runs c with its Found lines and its Dir captured, and returns
// its Stats (without the elapsed time), the Found text (times and the
// directory blotted out) and the names of the files it saved.
func session(c fuzz.Campaign) (fuzz.Stats, string, []string) {
	GinkgoHelper()
	var out bytes.Buffer
	c.Found, c.Progress = &out, GinkgoWriter
	if c.Dir == "" {
		c.Dir = GinkgoT().TempDir()
	}
	st, err := c.Run(context.Background())
	Expect(err).NotTo(HaveOccurred())
	entries, err := os.ReadDir(c.Dir)
	if !os.IsNotExist(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	st.Elapsed = 0
	return st, strings.ReplaceAll(elapsedNote.ReplaceAllString(out.String(), ", T)"), c.Dir, "DIR"), names
}

var _ = Describe("Campaign", func() {
	It("takes the results in seed order, however many goroutines check them", func() {
		c := fuzz.Campaign{Seed: 1, Count: 12, Checker: tanhChecker(), Reducer: fuzz.Reducer{MaxTests: 10}}
		st1, out1, files1 := session(c)
		Expect(st1.Findings).To(BeNumerically(">", 1), "the comparison needs several findings")
		Expect(st1.Programs).To(Equal(12))
		Expect(files1).To(HaveLen(len(st1.Records)), "a directory per distinct finding")
		count := 0
		for _, r := range st1.Records {
			count += r.Count
		}
		Expect(count).To(Equal(st1.Findings), "every finding counted in its record")
		for _, parallel := range []int{2, 3} {
			c.Parallel, c.Chunk = parallel, 2
			st, out, files := session(c)
			Expect(st).To(Equal(st1), "parallel %d", parallel)
			Expect(out).To(Equal(out1), "parallel %d", parallel)
			Expect(files).To(Equal(files1), "parallel %d", parallel)
		}
	})

	It("saves a finding in DIR/<id>/ as seed-N.rx and seed-N.reduced.rx, each after a header naming it and the commands, with finding.json", func() {
		dir := GinkgoT().TempDir()
		checker := tanhChecker()
		var mu sync.Mutex
		var asked []string
		c := fuzz.Campaign{Seed: 1, Count: 12, Checker: checker, Dir: dir, Parallel: 2,
			Commands: func(seed uint64, f fuzz.Finding, file string) (string, string) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, file)
				return fmt.Sprintf("rerun %d %s", seed, f.Executor), "check " + file
			}}
		st, out, _ := session(c)
		Expect(st.Findings).To(BeNumerically(">", 0))
		seed := st.FirstFound
		id := st.Records[0].ID
		Expect(id).To(MatchRegexp(`^skewed-accuracy-[0-9a-f]{12}$`))
		base := filepath.Join(dir, id, fmt.Sprintf("seed-%d", seed))
		Expect(asked).To(ContainElements(base+".rx", base+".reduced.rx"))
		Expect(out).To(MatchRegexp(`^FOUND seed %d: skewed vs oracle: mismatch in \w+ batch \d+: .*\n  saved DIR/%s/seed-%d.rx and DIR/%s/seed-%d.reduced.rx \(reduced from \d+ to \d+ statements \(\d+ candidates, \d+ tested, T\)\)\n`, seed, id, seed, id, seed))
		recs, err := fuzz.ReadRecords(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(len(st.Records)))

		orig, err := os.ReadFile(base + ".rx")
		Expect(err).NotTo(HaveOccurred())
		red, err := os.ReadFile(base + ".reduced.rx")
		Expect(err).NotTo(HaveOccurred())
		p := fuzz.Generate(seed, fuzz.Config{})
		Expect(string(orig)).To(HaveSuffix("\n\n" + string(p.Source)))
		for name, text := range map[string]string{base + ".rx": string(orig), base + ".reduced.rx": string(red)} {
			Expect(text).To(HavePrefix(fmt.Sprintf("// rxeq fuzz finding, seed %d\n// signature: skewed vs oracle, mismatch in ", seed)))
			Expect(text).To(ContainSubstring(fmt.Sprintf("// rerun: rerun %d skewed\n// check this file: check %s\n\n", seed, name)))
		}
		Expect(string(red)).To(MatchRegexp(`(?m)^// reduced from \d+ to \d+ statements \(\d+ candidates, \d+ tested, `))
		Expect(fuzz.CountStmts(red)).To(BeNumerically("<", fuzz.CountStmts(orig)))

		// The saved files, header included, check and fail the same way.
		repOrig, err := checker.Check(context.Background(), orig)
		Expect(err).NotTo(HaveOccurred())
		Expect(repOrig.OK()).To(BeFalse())
		repRed, err := checker.Check(context.Background(), red)
		Expect(err).NotTo(HaveOccurred())
		Expect(repRed.Has(repOrig.Findings[0].Signature())).To(BeTrue(), "%v", repRed.Findings)
	})

	It("names no commands without Commands", func() {
		dir := GinkgoT().TempDir()
		st, _, _ := session(fuzz.Campaign{Seed: 1, Count: 12, Checker: tanhChecker(), Dir: dir, Reducer: fuzz.Reducer{MaxTests: 1}})
		Expect(st.Findings).To(BeNumerically(">", 0))
		red, err := os.ReadFile(filepath.Join(dir, st.Records[0].ID, fmt.Sprintf("seed-%d.reduced.rx", st.FirstFound)))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(red)).NotTo(ContainSubstring("// rerun:"))
		Expect(string(red)).To(MatchRegexp(`(?m)^// reduced from .*\n\n`))
	})

	It("stops after Count programs", func() {
		st, out, files := session(fuzz.Campaign{Seed: 5, Count: 5, Chunk: 2, Parallel: 2, Checker: &fuzz.Checker{}})
		Expect(st).To(Equal(fuzz.Stats{Programs: 5}))
		Expect(out).To(BeEmpty())
		Expect(files).To(BeEmpty())
	})

	It("starts no program once Time has passed", func() {
		start := time.Now()
		st, _, _ := session(fuzz.Campaign{Seed: 1, Time: 200 * time.Millisecond, Chunk: 1, Parallel: 2, Checker: &fuzz.Checker{}})
		Expect(st.Programs).To(BeNumerically(">", 0))
		Expect(time.Since(start)).To(BeNumerically("<", 20*time.Second))
	})

	It("stops when its context ends, with the programs that finished counted", func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The executor cancels the campaign during its 200th run.
		c := fuzz.Campaign{Seed: 1, Count: 1 << 30, Parallel: 3, Dir: GinkgoT().TempDir(),
			Checker: &fuzz.Checker{Executors: []executor.Executor{&cancelling{after: 200, cancel: cancel}}}}
		var out bytes.Buffer
		c.Found = &out
		st, err := c.Run(ctx)
		Expect(err).To(MatchError(context.Canceled))
		Expect(st.Programs).To(BeNumerically(">", 0))
		Expect(st.Findings).To(BeZero())
		Expect(out.String()).To(BeEmpty())
	})

	It("stops at a finding it cannot save, with why", func() {
		file := filepath.Join(GinkgoT().TempDir(), "file")
		Expect(os.WriteFile(file, nil, 0o644)).To(Succeed())
		c := fuzz.Campaign{Seed: 1, Count: 100, Checker: tanhChecker(), Dir: filepath.Join(file, "findings"), Reducer: fuzz.Reducer{MaxTests: 1}}
		st, err := c.Run(context.Background())
		Expect(err).To(MatchError(MatchRegexp(`^saving seed \d+: mkdir .*: not a directory$`)))
		Expect(st.Findings).To(BeZero())
		Expect(st.Programs).To(BeNumerically("<", 100))
	})

	It("reports its progress every 100 programs, or on one line of a terminal", func() {
		var progress bytes.Buffer
		c := fuzz.Campaign{Seed: 1, Count: 100, Parallel: 4, Checker: &fuzz.Checker{}, Progress: &progress}
		_, err := c.Run(context.Background())
		Expect(err).NotTo(HaveOccurred())
		Expect(progress.String()).To(MatchRegexp(`^100 programs, 0 findings, [0-9.]+ programs/s\n$`))

		progress.Reset()
		c.Count, c.Terminal = 2, true
		_, err = c.Run(context.Background())
		Expect(err).NotTo(HaveOccurred())
		Expect(progress.String()).To(MatchRegexp(`^\r\x1b\[K1 programs, 0 findings, [0-9.]+ programs/s\r\x1b\[K2 programs, 0 findings, [0-9.]+ programs/s\r\x1b\[K$`))
	})

	It("gives each goroutine a slot of every Slotter, building in a directory of its own emptied after each chunk", func() {
		slots := filepath.Join(GinkgoT().TempDir(), "slots")
		Expect(os.Mkdir(slots, 0o700)).To(Succeed())
		s := &slotting{}
		c := fuzz.Campaign{Seed: 1, Count: 12, Chunk: 2, Parallel: 2, SlotDirs: slots,
			Checker: &fuzz.Checker{Executors: []executor.Executor{s}}}
		st, _, _ := session(c)
		Expect(st.Programs).To(Equal(12))
		Expect(s.dirs).To(HaveLen(2))
		Expect(s.dirs[0]).NotTo(Equal(s.dirs[1]))
		for _, d := range s.dirs {
			Expect(filepath.Dir(d)).To(Equal(slots))
		}
		Expect(s.closed.Load()).To(BeEquivalentTo(2), "every slot is released")
		Expect(s.ownPrepares.Load()).To(BeZero(), "the slots checked every program")
		Expect(s.slotPrepares.Load()).To(BeEquivalentTo(12))
		Expect(s.mostSeen.Load()).To(BeNumerically("<", 2), "a chunk of 2 found its directory emptied")

		By("checking with the Checker itself with NoSlots")
		s2 := &slotting{}
		c.Checker, c.NoSlots = &fuzz.Checker{Executors: []executor.Executor{s2}}, true
		st, _, _ = session(c)
		Expect(st.Programs).To(Equal(12))
		Expect(s2.dirs).To(BeEmpty())
		Expect(s2.ownPrepares.Load()).To(BeEquivalentTo(12))
	})
})

var _ = Describe("Checker.Slot", func() {
	It("replaces each Slotter by a slot, keeps the other executors and leaves the checker alone", func() {
		s := &slotting{}
		c := &fuzz.Checker{Executors: []executor.Executor{fallback.Executor{}, s}, Metamorphic: 1}
		own, release := c.Slot("/some/dir")
		Expect(own).NotTo(BeIdenticalTo(c))
		Expect(own.Metamorphic).To(Equal(1))
		Expect(own.Executors[0]).To(Equal(fallback.Executor{}))
		Expect(own.Executors[1]).To(BeAssignableToTypeOf(slotExecutor{}))
		Expect(c.Executors[1]).To(BeIdenticalTo(s))
		Expect(s.dirs).To(Equal([]string{"/some/dir"}))
		Expect(release.Close()).To(Succeed())
		Expect(s.closed.Load()).To(BeEquivalentTo(1))
	})
})

// slotting is an executor.Slotter over the fallback interpreter. It
// records the directory of each slot and counts the preparations of the
// executor itself and of its slots, and, in a slot with a directory,
// the most entries a preparation found there (each adds one, as a build
// would).
type slotting struct {
	mu                        sync.Mutex
	dirs                      []string
	closed                    atomic.Int64
	ownPrepares, slotPrepares atomic.Int64
	mostSeen                  atomic.Int64
}

func (s *slotting) Name() executor.Name { return "slotting" }

func (s *slotting) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	s.ownPrepares.Add(1)
	return fallback.Executor{}.Prepare(ctx, f, p)
}

func (s *slotting) Slot(dir string) (executor.Executor, io.Closer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dirs = append(s.dirs, dir)
	return slotExecutor{s, dir}, closerFunc(func() error { s.closed.Add(1); return nil })
}

type slotExecutor struct {
	s   *slotting
	dir string
}

func (e slotExecutor) Name() executor.Name { return "slotting" }

func (e slotExecutor) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	e.s.slotPrepares.Add(1)
	if e.dir != "" {
		entries, err := os.ReadDir(e.dir)
		if err != nil {
			return nil, err
		}
		for n := int64(len(entries)); ; {
			most := e.s.mostSeen.Load()
			if n <= most || e.s.mostSeen.CompareAndSwap(most, n) {
				break
			}
		}
		build, err := os.MkdirTemp(e.dir, "build-")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(build, "lib.so"), []byte("built"), 0o644); err != nil {
			return nil, err
		}
	}
	return fallback.Executor{}.Prepare(ctx, f, p)
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// cancelling is the fallback interpreter, calling cancel during its
// after-th run.
type cancelling struct {
	runs   atomic.Int64
	after  int64
	cancel context.CancelFunc
}

func (c *cancelling) Name() executor.Name { return "cancelling" }

func (c *cancelling) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	inner, err := fallback.Executor{}.Prepare(ctx, f, p)
	return cancellingPrepared{c, inner}, err
}

type cancellingPrepared struct {
	c     *cancelling
	inner executor.Prepared
}

func (p cancellingPrepared) Run(ctx context.Context, fn string, in map[string]*tensor.Tensor) (executor.Outcome, error) {
	if p.c.runs.Add(1) == p.c.after {
		p.c.cancel()
	}
	return p.inner.Run(ctx, fn, in)
}

func (p cancellingPrepared) Close() error { return p.inner.Close() }
