//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal of cols columns and returns its master
// and its terminal side. Without /dev/ptmx (a container with no devpts)
// the spec is skipped, saying why.
func openPTY(cols uint16) (master, tty *os.File) {
	GinkgoHelper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		Skip("no /dev/ptmx: this machine cannot open a pseudo-terminal")
	}
	Expect(err).NotTo(HaveOccurred())
	fd := int(master.Fd())
	Expect(unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0)).To(Succeed())
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	Expect(err).NotTo(HaveOccurred())
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	Expect(err).NotTo(HaveOccurred())
	Expect(unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: cols})).To(Succeed())
	return master, tty
}

var _ = Describe("on a terminal", Label("e2e"), func() {
	It("tells a terminal from a pipe, a file and /dev/null", func() {
		master, tty := openPTY(100)
		defer master.Close()
		defer tty.Close()
		width, ok := terminalWidth(tty)
		Expect(ok).To(BeTrue())
		Expect(width).To(Equal(100))
		r, w, err := os.Pipe()
		Expect(err).NotTo(HaveOccurred())
		defer r.Close()
		defer w.Close()
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		Expect(err).NotTo(HaveOccurred())
		defer null.Close()
		for _, f := range []io.Writer{w, null, &bytes.Buffer{}} {
			_, ok := terminalWidth(f)
			Expect(ok).To(BeFalse())
		}
	})

	It("draws a live progress bar on stderr, within the width, and clears it at the end", func() {
		master, tty := openPTY(60)
		var screen bytes.Buffer
		read := make(chan struct{})
		go func() {
			defer close(read)
			_, _ = io.Copy(&screen, master) // ends with EIO once tty is closed
		}()
		var out bytes.Buffer
		code := runMain(context.Background(), []string{"run", "--backend", "oracle,fallback", "../../scenarios/reference.rx"}, &out, tty)
		Expect(tty.Close()).To(Succeed())
		Eventually(read).Should(BeClosed())
		Expect(master.Close()).To(Succeed())
		Expect(code).To(Equal(0), out.String())

		s := screen.String()
		Expect(s).NotTo(ContainSubstring("\n"), "one line, redrawn in place")
		Expect(s).To(HaveSuffix("\r\033[K"), "cleared at the end")
		frames := strings.Split(strings.TrimSuffix(s, "\r\033[K"), "\r\033[K")
		Expect(frames[0]).To(BeEmpty())
		frames = frames[1:]
		Expect(frames).NotTo(BeEmpty())
		for _, f := range frames {
			Expect(len([]rune(f))).To(BeNumerically("<=", 59), f)
			Expect(f).To(MatchRegexp(`^\[[=> ]{24}\] (\d/9 groups|preparing)  `))
		}
		Expect(frames[len(frames)-1]).To(HavePrefix("[========================] 9/9 groups"))
		Expect(out.String()).NotTo(ContainSubstring("\033"))
		Expect(lastLine(out.String())).To(Equal("21 passed, 0 failed"))
	})
})
