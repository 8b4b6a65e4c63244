package fuzz_test

import (
	"context"
	"io"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
)

// slotExec is an executor whose slots are numbered resources (a worker
// in isolate's terms): Slot hands out a new one, ShareSlot (when twin is
// set) takes the one of the slot it is given.
type slotExec struct {
	name, twin executor.Name
	slot       int  // the resource this copy uses (0: none)
	next       *int // the last resource handed out
	closed     *int // how many resources were released
}

func (e slotExec) Name() executor.Name   { return e.name }
func (e slotExec) TwinOf() executor.Name { return e.twin }

func (e slotExec) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	return fallback.Executor{}.Prepare(ctx, f, p)
}

func (e slotExec) Slot(string) (executor.Executor, io.Closer) {
	*e.next++
	e.slot = *e.next
	return e, closeCount{e.closed}
}

func (e slotExec) ShareSlot(slot executor.Executor) (executor.Executor, bool) {
	s, ok := slot.(slotExec)
	if !ok || s.slot == 0 || s.name != e.twin {
		return e, false
	}
	e.slot = s.slot
	return e, true
}

type closeCount struct{ n *int }

func (c closeCount) Close() error { *c.n++; return nil }

var _ = Describe("a campaign goroutine's slots", func() {
	It("runs a variant in its twin's slot, one resource for both", func() {
		var next, closed int
		base := slotExec{name: "base", next: &next, closed: &closed}
		v1 := slotExec{name: "base-v1", twin: "base", next: &next, closed: &closed}
		v2 := slotExec{name: "base-v2", twin: "base", next: &next, closed: &closed}
		lone := slotExec{name: "other-v", twin: "other", next: &next, closed: &closed}
		c := &fuzz.Checker{Reference: fallback.Executor{}, Executors: []executor.Executor{v1, base, v2, lone}}
		own, slots := c.Slot("")
		got := map[executor.Name]int{}
		for _, e := range own.Executors {
			got[e.Name()] = e.(slotExec).slot
		}
		Expect(got["base"]).NotTo(BeZero())
		Expect(got["base-v1"]).To(Equal(got["base"]), "the variant listed before its twin shares it too")
		Expect(got["base-v2"]).To(Equal(got["base"]))
		Expect(got["other-v"]).NotTo(BeZero(), "a variant whose twin is not in the run has a slot of its own")
		Expect(got["other-v"]).NotTo(Equal(got["base"]))
		Expect(next).To(Equal(2), "two resources: base's, shared, and other-v's")
		Expect(c.Executors[0].(slotExec).slot).To(BeZero(), "the checker itself is not modified")
		Expect(slots.Close()).To(Succeed())
		Expect(closed).To(Equal(2), "each resource released once")
	})
})
