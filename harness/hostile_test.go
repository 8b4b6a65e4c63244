package harness_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor/npy"
)

// sparseNpy writes a float32 .npy header of shape rows×4 at path and
// extends the file to the size the header announces, without data (a
// sparse file: a few KiB on disk).
func sparseNpy(path string, rows int) {
	GinkgoHelper()
	Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
	small := filepath.Join(GinkgoT().TempDir(), "h.npy")
	save(filepath.Dir(small), "h.npy", ramp(1, 4))
	b, err := os.ReadFile(small)
	Expect(err).NotTo(HaveOccurred())
	hdr := b[:len(b)-16]
	h, err := npy.ReadHeader(bytesReader(hdr))
	Expect(err).NotTo(HaveOccurred())
	copy(hdr[10:], "{'descr': '<f4', 'fortran_order': False, 'shape': ("+itoa(rows)+", 4), }")
	Expect(os.WriteFile(path, hdr, 0o644)).To(Succeed())
	Expect(os.Truncate(path, h.DataOffset+int64(rows)*16)).To(Succeed())
}

var _ = Describe("hostile input files", func() {
	ctx := context.Background()

	It("refuses a FIFO given as an input at once, before running anything", func() {
		dir := GinkgoT().TempDir()
		fifo := filepath.Join(dir, "x.npy")
		Expect(syscall.Mkfifo(fifo, 0o600)).To(Succeed()) // no writer: an open without O_NONBLOCK blocks forever
		opts := onlyFallback()
		opts.Inputs = dir
		done := make(chan error, 1)
		go func() {
			_, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
			done <- err
		}()
		var err error
		Eventually(done, 10*time.Second).Should(Receive(&err))
		Expect(errors.Is(err, harness.ErrInputs)).To(BeTrue(), "%v", err)
		Expect(err).To(MatchError(ContainSubstring(fifo + " (parameter x of lin): npy: malformed file: not a regular file (it is a FIFO); give a regular .npy file")))
	})

	It("refuses a group whose sparse files claim more than the budget without reading them, and runs the others", func() {
		dir := GinkgoT().TempDir()
		sparseNpy(filepath.Join(dir, "tiny/lin/b4096/inputs/x.npy"), 1<<24) // 256 MiB by its header, 4 KiB on disk
		save(dir, "tiny/lin/b2/inputs/x.npy", ramp(2, 4))
		opts := onlyFallback()
		opts.Inputs, opts.MaxMemory = dir, 32<<20
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		runtime.ReadMemStats(&after)
		Expect(err).To(MatchError(ContainSubstring("b4096/inputs/x.npy: parameter x of lin has shape (16777216, 4): dimension 0 (B) is 16777216, but the directory b4096 has B = 4096")))
		Expect(res).To(BeNil())

		Expect(os.RemoveAll(filepath.Join(dir, "tiny/lin/b4096"))).To(Succeed())
		sparseNpy(filepath.Join(dir, "tiny/lin/b16777216/inputs/x.npy"), 1<<24)
		runtime.ReadMemStats(&before)
		res, err = harness.Run(ctx, []*program.File{tinyFile()}, opts)
		runtime.ReadMemStats(&after)
		Expect(err).NotTo(HaveOccurred())
		Expect(after.TotalAlloc-before.TotalAlloc).To(BeNumerically("<", 32<<20), "allocated within the 32 MiB budget")
		var big, small int
		for _, c := range res.Cases {
			switch {
			case c.Function == "lin" && c.Batch == 1<<24:
				big++
				Expect(c.Status).To(Equal(harness.StatusError))
				Expect(c.Message).To(ContainSubstring("memory budget exceeded"))
			case c.Function == "lin" && c.Batch == 2:
				small++
				Expect(c.Status).To(Equal(harness.StatusPass), c.Message)
			}
		}
		Expect([]int{big, small}).To(Equal([]int{2, 2}))
	})

	It("holds batches from the files to the batch limit", func() {
		dir := GinkgoT().TempDir()
		sparseNpy(filepath.Join(dir, "x.npy"), harness.MaxBatch+1)
		opts := onlyFallback()
		opts.Inputs = dir
		_, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(errors.Is(err, harness.ErrInputs)).To(BeTrue(), "%v", err)
		Expect(err).To(MatchError(ContainSubstring("lin: the files give batch 16777217 (B = 16777217, from " + filepath.Join(dir, "x.npy") + "); at most 16777216, the limit of //rx:batches")))
	})

	It("refuses two groups of one batch: bN directories that parse alike, or a batch given twice", func() {
		dir := GinkgoT().TempDir()
		save(dir, "tiny/lin/b4/inputs/x.npy", ramp(4, 4))
		save(dir, "tiny/lin/b04/inputs/x.npy", ramp(4, 4))
		opts := onlyFallback()
		opts.Inputs = dir
		_, err := harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(errors.Is(err, harness.ErrInputs)).To(BeTrue(), "%v", err)
		Expect(err).To(MatchError(ContainSubstring(filepath.Join(dir, "tiny/lin/b04") + " and " + filepath.Join(dir, "tiny/lin/b4") + " are both batch 4; keep one of them")))

		opts = onlyFallback()
		opts.Batches = []int{4, 1, 4}
		_, err = harness.Run(ctx, []*program.File{tinyFile()}, opts)
		Expect(errors.Is(err, harness.ErrOptions)).To(BeTrue(), "%v", err)
		Expect(err).To(MatchError(ContainSubstring("batch 4 is given twice")))
	})
})

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

func itoa(n int) string { return strconv.Itoa(n) }
