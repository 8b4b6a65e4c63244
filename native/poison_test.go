//go:build cgo

package native_test

import (
	"context"
	"fmt"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/scenarios"
	"github.com/rextio/rxeq/tensor"
)

// poisonWrapper calls the generated function FN twice: once to size the
// arena, then, with the arena's block and the stack below the caller
// filled with 0xA5 bytes, again, returning the second call's status and
// counters. A runtime that read a slot field, an arena byte or anything
// else it had not written would see the poison.
const poisonWrapper = `
#include <string.h>

__attribute__((noinline)) static void rx_poison_stack(void)
{
	unsigned char buf[1 << 16];
	memset(buf, 0xA5, sizeof buf);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

int rx_poisoned(const rx_arg *args, rx_status *st)
{
	rx_arena *arena = st->arena;
	FN(args, st);
	*st = (rx_status){0};
	st->arena = arena;
	if (arena && arena->block)
		memset(arena->block, 0xA5, (size_t)arena->cap);
	rx_poison_stack();
	return FN(args, st);
}
`

// The runtime leaves slot fields and arena bytes unwritten until an op
// writes them: calls over a poisoned stack and arena give the same bits
// and counters as ordinary calls.
var _ = Describe("a call over a poisoned stack and arena", Label("native"), func() {
	for _, fn := range []string{"score_linear", "score_mlp", "score_pipeline"} {
		It(fmt.Sprintf("computes %s's results and counters unchanged", fn), func() {
			f, err := scenarios.Lookup("reference.rx")
			Expect(err).NotTo(HaveOccurred())
			p, err := program.Lower(f)
			Expect(err).NotTo(HaveOccurred())
			prog := compile(p)
			pf := f.Func(fn)
			cname := "rx_fn_" + fn
			Expect(string(prog.Source())).To(ContainSubstring("int " + cname + "("))
			src := string(prog.Source()) + "#define FN " + cname + "\n" + poisonWrapper
			for _, batch := range []int{1, 3, 16} {
				in, err := harness.GenerateInputs(f, pf, batch, f.Seed, nil)
				Expect(err).NotTo(HaveOccurred())
				before := prog.Counters()
				want := run(prog, fn, in)
				after := prog.Counters()
				var args []*tensor.Tensor
				for _, prm := range pf.Params {
					args = append(args, in[prm.Name])
				}
				var outs []*tensor.Tensor
				for _, r := range pf.Results {
					w := want[r.Name]
					o := &tensor.Tensor{DType: w.DType, Shape: w.Shape}
					if w.DType == tensor.Int64 {
						o.I64 = make([]int64, len(w.I64))
						for i := range o.I64 {
							o.I64[i] = -0x5a5a5a5a
						}
					} else {
						o.F32 = make([]float32, len(w.F32))
						for i := range o.F32 {
							o.F32[i] = math.Float32frombits(0xA5A5A5A5)
						}
					}
					outs = append(outs, o)
				}
				st, err := native.InvokeSource(context.Background(), native.Options{CacheDir: suiteCache}, src, "rx_poisoned", append(args, outs...)...)
				Expect(err).NotTo(HaveOccurred())
				Expect(st.Code).To(BeZero())
				for j, r := range pf.Results {
					w, g := want[r.Name], outs[j]
					Expect(g.I64).To(Equal(w.I64), "%s at batch %d", r.Name, batch)
					Expect(len(g.F32)).To(Equal(len(w.F32)))
					for i := range w.F32 {
						if math.Float32bits(g.F32[i]) != math.Float32bits(w.F32[i]) {
							Fail(fmt.Sprintf("%s[%d] at batch %d: %v, want %v", r.Name, i, batch, g.F32[i], w.F32[i]))
						}
					}
				}
				c := st.Counters
				Expect(c.BoundaryValidations).To(Equal(after.BoundaryValidations - before.BoundaryValidations))
				Expect(c.ResultValidations).To(Equal(after.ResultValidations - before.ResultValidations))
				Expect(c.FactQueries).To(Equal(after.FactQueries - before.FactQueries))
				Expect(c.TrustedReuses).To(Equal(after.TrustedReuses - before.TrustedReuses))
				Expect(c.FactRequeries).To(BeZero())
				Expect(c.ArenaReleases).To(Equal(c.ArenaAllocs))
			}
		})
	}
})
