package isolate_test

import (
	"context"
	"errors"
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/isolate"
	"github.com/rextio/rxeq/native"
	nrt "github.com/rextio/rxeq/native/runtime"
	"github.com/rextio/rxeq/program/ir"
)

// variantOf returns e as native's variant name, running every call's
// kernels at isa ("" for the widest) with tile rows tile.
func variantOf(e isolate.Executor, name executor.Name, isa string, tile int) isolate.Executor {
	e.Pool, e.Variant = nil, name
	e.Options.CallISA, e.Options.TileRows = isa, tile
	return e
}

// Native's bit-identical variants run in native's worker: one process,
// one build and one load of each program, each call with its own
// executor's settings.
var _ = Describe("native's variants sharing native's pool", Label("native"), func() {
	BeforeEach(needCC)
	ctx := context.Background()

	It("share native's worker and its build of each program, giving native's bits", func() {
		e := pooled(workerExecutor(""))
		fe, pe := lower("e.rx", bothSrc)
		Expect(e.Prebuild(ctx, []*ir.Program{pe})).To(Succeed())
		nat := prepareProgram(e, fe, pe)
		best, err := nrt.DetectISA("")
		Expect(err).NotTo(HaveOccurred())
		for _, v := range []isolate.Executor{
			variantOf(e, executor.NativeC, "c", 0),
			variantOf(e, executor.NativeSSE2, "sse2", 0),
			variantOf(e, executor.NativeTiled, "", 1),
		} {
			if v.Options.CallISA == "sse2" && best == "c" {
				continue
			}
			s, ok := v.ShareSlot(e)
			Expect(ok).To(BeTrue(), "%s shares native's slot", v.Name())
			sv := s.(isolate.Executor)
			Expect(sv.Pool).To(BeIdenticalTo(e.Pool))
			Expect(sv.Name()).To(Equal(v.Name()))
			Expect(sv.Prebuild(ctx, []*ir.Program{pe})).To(Succeed(), "nothing to build: native's Prebuild built it")
			pv := prepareProgram(sv, fe, pe)
			Expect(pv.(executor.Built).Info().Library).To(Equal(nat.(executor.Built).Info().Library), "one build")
			for _, fn := range []string{"e", "t"} {
				want, err := nat.Run(ctx, fn, poolInput())
				Expect(err).NotTo(HaveOccurred())
				got, err := pv.Run(ctx, fn, poolInput())
				Expect(err).NotTo(HaveOccurred())
				for i, x := range got.Outputs["y"].F32 {
					Expect(math.Float32bits(x)).To(Equal(math.Float32bits(want.Outputs["y"].F32[i])), "%s %s y[%d]", v.Name(), fn, i)
				}
			}
		}
		Expect(isolate.PoolWorkers(e.Pool)).To(Equal(1), "one worker for native and its variants")
	})

	It("runs a variant's calls at its own ISA: native-c's plain C Tanh crashes where native's does not, and the crash is the variant's", func() {
		if best, _ := nrt.DetectISA(""); best == "c" {
			Skip("this CPU runs the kernels in plain C only: native would call tanh too")
		}
		// The runtime at its widest ISA computes Tanh with SLEEF; only the
		// plain C kernel calls libm's tanh, which the fault replaces with a
		// write through a null pointer.
		e := workerExecutor("")
		e.Options.CC = "cc -Wl,--wrap=tanh " + faults["segv"]
		e = pooled(e)
		ft, pt := lower("t.rx", tanhSrc)
		Expect(e.Prebuild(ctx, []*ir.Program{pt})).To(Succeed())
		nat := prepareProgram(e, ft, pt)
		s, ok := variantOf(e, executor.NativeC, "c", 0).ShareSlot(e)
		Expect(ok).To(BeTrue())
		pc := prepareProgram(s, ft, pt)

		got, err := nat.Run(ctx, "t", poolInput())
		Expect(err).NotTo(HaveOccurred(), "native runs SLEEF's Tanh")
		Expect(float64(got.Outputs["y"].F32[3])).To(BeNumerically("~", math.Tanh(1.5)+1, 1e-6))
		_, err = pc.Run(ctx, "t", poolInput())
		Expect(errors.Is(err, isolate.ErrCrashed)).To(BeTrue(), "native-c runs the plain C kernel, which calls tanh: %v", err)
		Expect(err.Error()).To(HavePrefix("native-c crashed: signal SIGSEGV"))
		got, err = nat.Run(ctx, "t", poolInput())
		Expect(err).NotTo(HaveOccurred(), "native goes on after its variant's crash")
		Expect(float64(got.Outputs["y"].F32[3])).To(BeNumerically("~", math.Tanh(1.5)+1, 1e-6))
	})

	It("refuses a variant of another build, and a variant whose ISA the library cannot run fails with ErrISA", func() {
		e := pooled(workerExecutor(""))
		other := variantOf(e, executor.NativeC, "c", 0)
		other.Options.CC = "cc -O1"
		_, ok := other.ShareSlot(e)
		Expect(ok).To(BeFalse(), "another compiler builds another library")
		_, ok = variantOf(e, executor.NativeC, "c", 0).ShareSlot(workerExecutor(""))
		Expect(ok).To(BeFalse(), "an executor without a Pool has no slot to share")

		if best, _ := nrt.DetectISA(""); best == "c" {
			return
		}
		capped := workerExecutor("")
		capped.Options.ISA = "c"
		capped = pooled(capped)
		s, ok := variantOf(capped, executor.NativeSSE2, "sse2", 0).ShareSlot(capped)
		Expect(ok).To(BeTrue())
		fe, pe := lower("e.rx", expSrc)
		_, err := s.Prepare(ctx, fe, pe)
		Expect(errors.Is(err, native.ErrISA)).To(BeTrue(), "%v", err)
		Expect(err).To(MatchError(ContainSubstring("the runtime library runs its kernels at c at most, not sse2")))
	})
})
