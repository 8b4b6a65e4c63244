package isolate

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"math"
	"os"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/scenarios"
	"github.com/rextio/rxeq/tensor"
)

// viaGob sends v through a gob stream into out, as the pipe does.
func viaGob(v, out any) {
	var b bytes.Buffer
	Expect(gob.NewEncoder(&b).Encode(v)).To(Succeed())
	Expect(gob.NewDecoder(&b).Decode(out)).To(Succeed())
}

var _ = Describe("the wire format", func() {
	It("carries the whole native options a worker builds with: TileRows, ProgramCC and the runtime cache included", func() {
		opts := native.Options{CC: "cc -m64", CacheDir: "/c", Mode: native.Auto, CompileTimeout: 7,
			Runtime: executor.Torch, CXX: "c++", TorchThreads: 2, TileRows: 96, ProgramCC: "tcc", RuntimeCacheDir: "/rt"}
		e := Executor{Options: opts}
		var req request
		viaGob(e.request(reqPrepare), &req)
		Expect(options(&req)).To(Equal(opts))
	})

	It("carries every catalog program's IR unchanged (same printout, same C)", func() {
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		src, err := os.ReadFile("testdata/two.rx")
		Expect(err).NotTo(HaveOccurred())
		two, err := program.Parse("testdata/two.rx", src)
		Expect(err).NotTo(HaveOccurred())
		for _, f := range append(files, two) {
			p, err := program.Lower(f)
			Expect(err).NotTo(HaveOccurred())
			wp, err := encodeProgram(p)
			Expect(err).NotTo(HaveOccurred())
			var got wireProgram
			viaGob(wp, &got)
			q, err := decodeProgram(&got)
			Expect(err).NotTo(HaveOccurred())
			Expect(q.String()).To(Equal(p.String()), f.Name)
			want, err := native.Generate(p)
			Expect(err).NotTo(HaveOccurred())
			gen, err := native.Generate(q)
			Expect(err).NotTo(HaveOccurred())
			Expect(gen).To(Equal(want), f.Name)
			// Sharing survives: a parameter is the same *Value as in Values.
			for _, fn := range q.Funcs {
				for _, v := range fn.Params {
					Expect(fn.Values[v.ID]).To(BeIdenticalTo(v))
				}
			}
		}
	})

	It("carries tensors bit for bit, NaN payloads and signed zeros included", func() {
		nan := math.Float32frombits(0x7fc00123)
		in := map[string]*tensor.Tensor{
			"f": tensor.FromFloat32([]float32{1.5, nan, float32(math.Copysign(0, -1)), float32(math.Inf(-1))}, 2, 2),
			"d": tensor.FromFloat64([]float64{math.Pi}, 1),
			"i": tensor.Scalar(math.MinInt64),
			"e": tensor.NewFloat32(0, 3),
		}
		var w map[string]wireTensor
		viaGob(encodeTensors(in), &w)
		out, err := decodeTensors(w)
		Expect(err).NotTo(HaveOccurred())
		Expect(math.Float32bits(out["f"].F32[1])).To(Equal(uint32(0x7fc00123)))
		Expect(math.Float32bits(out["f"].F32[2])).To(Equal(uint32(0x80000000)))
		Expect(out["f"].Shape).To(Equal([]int{2, 2}))
		Expect(out["d"].F64).To(Equal([]float64{math.Pi}))
		Expect(out["i"].I64).To(Equal([]int64{math.MinInt64}))
		Expect(out["i"].Shape).To(BeEmpty())
		Expect(out["e"].Shape).To(Equal([]int{0, 3}))
		Expect(out["e"].F32).To(BeEmpty())
	})

	It("keeps an error's text and kind", func() {
		site := &ir.Site{Func: "f", Builtin: "CheckedDiv", LHS: "i", Pos: "a.rx:3:4"}
		for _, err := range []error{
			ir.CheckedError(site, 7, 0),
			ir.CheckedError(site, math.MinInt64, -1),
			errors.Join(errors.New("context"), ir.CheckedError(site, 7, 0)),
			native.ErrClosed,
		} {
			var w *wireError
			viaGob(encodeError(err), &w)
			got := decodeError(w)
			Expect(got.Error()).To(Equal(err.Error()))
			var want, re *ir.RuntimeError
			if errors.As(err, &want) {
				Expect(errors.As(got, &re)).To(BeTrue())
				Expect(*re).To(Equal(*want))
			}
		}
		Expect(errors.Is(decodeError(encodeError(native.ErrClosed)), native.ErrClosed)).To(BeTrue())
	})
})

var _ = Describe("Close", Label("native"), func() {
	It("ends and reaps the worker, and later Runs fail with ErrClosed", func() {
		self, err := os.Executable()
		Expect(err).NotTo(HaveOccurred())
		src, err := os.ReadFile("testdata/two.rx")
		Expect(err).NotTo(HaveOccurred())
		f, err := program.Parse("testdata/two.rx", src)
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		e := Executor{Options: native.Options{CacheDir: GinkgoT().TempDir()}, Command: []string{self}, Env: []string{"RXEQ_ISOLATE_TEST_WORKER=1"}}
		pr, err := e.Prepare(context.Background(), f, p)
		if errors.Is(err, native.ErrCompiler) {
			Skip("no C compiler")
		}
		Expect(err).NotTo(HaveOccurred())
		pid := pr.(*prepared).w.proc.Pid()
		Expect(syscall.Kill(pid, 0)).To(Succeed())
		Expect(pr.Close()).To(Succeed())
		Expect(syscall.Kill(pid, 0)).To(MatchError(syscall.ESRCH)) // gone, not a zombie
		Expect(pr.Close()).To(Succeed())
		_, err = pr.Run(context.Background(), "plain", nil)
		Expect(err).To(MatchError(native.ErrClosed))
	})

	It("refuses a worker that does not speak the protocol", func() {
		src, err := os.ReadFile("testdata/two.rx")
		Expect(err).NotTo(HaveOccurred())
		f, err := program.Parse("testdata/two.rx", src)
		Expect(err).NotTo(HaveOccurred())
		p, err := program.Lower(f)
		Expect(err).NotTo(HaveOccurred())
		_, err = Executor{Command: []string{"/bin/sh", "-c", "echo hello; exit 3"}}.Prepare(context.Background(), f, p)
		Expect(errors.Is(err, ErrWorker)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("did not start: native crashed: exit status 3"))
	})
})
