package harness_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// oneWorker is an executor that, like an isolated native backend, runs
// every case in one worker, one call at a time. sq at batch 4 hangs: it
// holds the worker well past its deadline, ignoring its context. A call
// whose context ends while it waits for the worker returns ErrNotRun and
// names the case holding it.
type oneWorker struct {
	sem    chan struct{}
	mu     sync.Mutex
	holder string
	hung   chan struct{} // closed once the hanging case holds the worker
	once   sync.Once
	hang   time.Duration
}

func newOneWorker(hang time.Duration) *oneWorker {
	return &oneWorker{sem: make(chan struct{}, 1), hung: make(chan struct{}), hang: hang}
}

func (w *oneWorker) executor() executor.Executor {
	return hookExecutor{name: "worker", inner: fallback.Executor{},
		before: func(ctx context.Context, fn string, in map[string]*tensor.Tensor) error {
			hangs := fn == "sq" && in["x"].Shape[0] == 4
			if !hangs {
				// Queue behind the hanging case, so that the test does
				// not depend on scheduling.
				select {
				case <-w.hung:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			select {
			case w.sem <- struct{}{}:
			case <-ctx.Done():
				w.mu.Lock()
				defer w.mu.Unlock()
				return fmt.Errorf("%w: worker busy with %s", executor.ErrNotRun, w.holder)
			}
			w.mu.Lock()
			w.holder = executor.CaseFrom(ctx)
			w.mu.Unlock()
			defer func() { <-w.sem }()
			if hangs {
				w.once.Do(func() { close(w.hung) })
				time.Sleep(w.hang)
			}
			return nil
		}}
}

var _ = Describe("cases queued behind a hanging one", func() {
	It("are reported as not run, naming the case that held the worker, not as timeouts", func() {
		w := newOneWorker(1500 * time.Millisecond)
		opts := harness.Options{Executors: []executor.Executor{w.executor()}, CaseTimeout: 300 * time.Millisecond,
			Parallel: 6, SkipLocks: true}
		res, err := harness.Run(context.Background(), []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Cases).To(HaveLen(12))
		notRun := 0
		for _, c := range res.Cases {
			switch {
			case c.Executor == "oracle":
				Expect(c.Status).To(Equal(harness.StatusPass), c.Name())
			case c.Function == "sq" && c.Batch == 4:
				Expect(c.Status).To(Equal(harness.StatusError))
				Expect(c.Message).To(Equal("case timed out after 300ms"))
			default:
				notRun++
				Expect(c.Status).To(Equal(harness.StatusError), c.Name())
				Expect(c.Message).To(Equal("not run: worker busy with tiny/sq/b4/worker"), c.Name())
				Expect(c.Message).NotTo(ContainSubstring("timed out"))
			}
		}
		Expect(notRun).To(Equal(5))
	})

	It("pass when their deadline leaves time to run after the hanging one", func() {
		w := newOneWorker(100 * time.Millisecond)
		opts := harness.Options{Executors: []executor.Executor{w.executor()}, CaseTimeout: 5 * time.Second, Parallel: 6, SkipLocks: true}
		res, err := harness.Run(context.Background(), []*program.File{tinyFile()}, opts)
		Expect(err).NotTo(HaveOccurred())
		for _, c := range res.Cases {
			Expect(c.Status).To(Equal(harness.StatusPass), "%s: %s", c.Name(), c.Message)
		}
	})

	It("passes each Run the name of its case", func() {
		var mu sync.Mutex
		var seen []string
		e := hookExecutor{name: "named", inner: fallback.Executor{},
			before: func(ctx context.Context, _ string, _ map[string]*tensor.Tensor) error {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, executor.CaseFrom(ctx))
				return nil
			}}
		_, err := harness.Run(context.Background(), []*program.File{tinyFile()}, harness.Options{Executors: []executor.Executor{e}, SkipLocks: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(seen).To(ConsistOf("tiny/lin/b1/named", "tiny/lin/b4/named", "tiny/lin/b9/named",
			"tiny/sq/b1/named", "tiny/sq/b4/named", "tiny/sq/b9/named"))
		Expect(executor.CaseFrom(context.Background())).To(BeEmpty())
		Expect(strings.Count(strings.Join(seen, " "), "/named")).To(Equal(6))
	})
})
