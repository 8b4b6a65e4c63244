package program_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/program"
)

// nestedTanh is `y = Tanh(Tanh(…(x)…))` with n calls, on line 3 column 2.
func nestedTanh(n int) []byte {
	return []byte("package p\nfunc f(x [B]float32) (y [B]float32) {\n\ty = " + strings.Repeat("Tanh(", n) + "x" + strings.Repeat(")", n) + "\n\treturn\n}\n")
}

// nestedFor is n `for range 1 {` loops inside one another.
func nestedFor(n int) []byte {
	return []byte("package p\nfunc f(x [B]float32) (y [B]float32) {\n\ty = x\n" + strings.Repeat("for range 1 {\n", n) + "y = Tanh(y)\n" + strings.Repeat("}\n", n) + "\treturn\n}\n")
}

var _ = Describe("limits on hostile programs", func() {
	It("rejects 10,000 nested calls at the nesting limit, naming the place and the limit", func() {
		_, err := program.Parse("t.rx", nestedTanh(10000))
		Expect(errors.Is(err, program.ErrInvalid)).To(BeTrue())
		// The outermost call is depth 1 and its name depth 2, so the name
		// of the 256th call is the first node at depth 257.
		col := 6 + 5*255
		Expect(err.Error()).To(Equal(fmt.Sprintf("t.rx:3:%d: expression nests more than 256 deep here (calls, parentheses and operators inside one another): the limit is 256; assign inner parts to variables first", col)))
	})

	It("refuses before parsing what would make the parser recurse far deeper", func() {
		src := []byte("package p\nfunc f(x [B]float32) (y [B]float32) {\n\ty = " + strings.Repeat("(", 100000) + "x" + strings.Repeat(")", 100000) + "\n\treturn\n}\n")
		_, err := program.Parse("t.rx", src)
		Expect(err).To(MatchError("t.rx:3:16389: brackets nest more than 16384 deep here (expressions and blocks may each nest at most 256 deep): the file is not parsed"))
		src = []byte("package p\nfunc f(x [B]float32) (y [B]float32) {\n\ty = " + strings.Repeat("- ", 100000) + "x\n\treturn\n}\n")
		_, err = program.Parse("t.rx", src)
		Expect(err).To(MatchError("t.rx:3:32774: more than 16384 operators in a row here (expressions may nest at most 256 deep): the file is not parsed"))
	})

	It("accepts expressions and blocks nested right up to the limit", func() {
		_, err := program.Parse("t.rx", nestedTanh(program.MaxDepth-1))
		Expect(err).NotTo(HaveOccurred())
		_, err = program.Parse("t.rx", nestedTanh(program.MaxDepth))
		Expect(err).To(MatchError(ContainSubstring("expression nests more than 256 deep")))

		_, err = program.Parse("t.rx", nestedFor(program.MaxDepth))
		Expect(err).NotTo(HaveOccurred())
		_, err = program.Parse("t.rx", nestedFor(program.MaxDepth+1))
		Expect(err).To(MatchError(Equal(fmt.Sprintf("t.rx:%d:13: blocks nest more than 256 deep here (for and if bodies inside one another): the limit is 256; flatten the control flow", 4+program.MaxDepth))))
	})

	It("keeps checking the other functions of a file with a too-deep one", func() {
		src := string(nestedTanh(300)) + "func g(x [B]float64) (y [B]float32) { return }\n"
		_, err := program.Parse("t.rx", []byte(src))
		Expect(err).To(MatchError(ContainSubstring("t.rx:6:13: unsupported element type float64")))
	})

	It("treats a long chain of binary operators and of else-ifs as flat", func() {
		_, err := program.Parse("t.rx", flatSum(10000))
		Expect(err).NotTo(HaveOccurred())
		var b strings.Builder
		b.WriteString("package p\nfunc f(x [B]float32, n int64) (y [B]float32) {\n\ty = x\n\tif n == 0 {\n\t\ty = -y\n\t}")
		for i := range 5000 {
			fmt.Fprintf(&b, " else if n == %d {\n\t\ty = Tanh(y)\n\t}", i+1)
		}
		b.WriteString("\n\treturn\n}\n")
		_, err = program.Parse("t.rx", []byte(b.String()))
		Expect(err).NotTo(HaveOccurred())
	})

	It("quotes a long expression in a message by its first bytes", func() {
		src := "package p\nfunc f(x [B]float32) (y [B]float32) {\n\ty = x\n\tif x" + strings.Repeat(" + x", 1000) + " {\n\t}\n\treturn\n}\n"
		_, err := program.Parse("t.rx", []byte(src))
		Expect(err).To(MatchError(MatchRegexp(`^t\.rx:4:5: if condition x( \+ x){29} \+ … is a tensor`)))
	})

	It("refuses a source larger than 1 MiB before parsing it", func() {
		src := []byte("package p\n" + strings.Repeat("// padding\n", program.MaxFileSize/11+1))
		_, err := program.Parse("big.rx", src)
		Expect(errors.Is(err, program.ErrInvalid)).To(BeTrue())
		Expect(err).To(MatchError(fmt.Sprintf("big.rx:1:1: file is %d bytes, more than the limit of 1048576 (1 MiB): split it into several .rx files", len(src))))
	})

	Describe("ReadFile", func() {
		It("reads a regular file", func() {
			src, err := program.ReadFile("testdata/score_linear.rx")
			Expect(err).NotTo(HaveOccurred())
			Expect(string(src)).To(ContainSubstring("func score_linear"))
		})

		It("refuses /dev/zero without reading it", func() {
			_, err := program.ReadFile("/dev/zero")
			Expect(errors.Is(err, program.ErrNotRegular)).To(BeTrue())
			Expect(err).To(MatchError("/dev/zero: not a regular file (a character device): rxeq reads .rx source files only"))
		})

		It("refuses a FIFO without blocking (it is opened O_NONBLOCK, its kind checked on the descriptor)", func() {
			path := filepath.Join(GinkgoT().TempDir(), "pipe.rx")
			Expect(syscall.Mkfifo(path, 0o600)).To(Succeed())
			_, err := program.ReadFile(path)
			Expect(errors.Is(err, program.ErrNotRegular)).To(BeTrue())
			Expect(err).To(MatchError(ContainSubstring("not a regular file (a named pipe)")))
		})

		It("refuses a directory and a file over 1 MiB", func() {
			dir := GinkgoT().TempDir()
			_, err := program.ReadFile(dir)
			Expect(errors.Is(err, program.ErrNotRegular)).To(BeTrue())
			big := filepath.Join(dir, "big.rx")
			Expect(os.WriteFile(big, make([]byte, program.MaxFileSize+1), 0o600)).To(Succeed())
			_, err = program.ReadFile(big)
			Expect(errors.Is(err, program.ErrTooLarge)).To(BeTrue())
			Expect(err).To(MatchError(ContainSubstring("more than 1048576 bytes (1 MiB)")))
		})
	})
})
