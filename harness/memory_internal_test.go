package harness

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("reading the machine's memory", func() {
	write := func(dir, name, text string) string {
		p := filepath.Join(dir, name)
		Expect(os.WriteFile(p, []byte(text), 0o600)).To(Succeed())
		return p
	}

	It("takes MemAvailable, else MemTotal, from /proc/meminfo", func() {
		dir := GinkgoT().TempDir()
		p := write(dir, "meminfo", "MemTotal:       24683568 kB\nMemFree:         1000 kB\nMemAvailable:   24297148 kB\n")
		Expect(must(readMeminfo(p))).To(Equal(uint64(24297148 * 1024)))
		p = write(dir, "meminfo", "MemTotal:       2048 kB\n")
		Expect(must(readMeminfo(p))).To(Equal(uint64(2048 * 1024)))
		p = write(dir, "meminfo", "garbage\nMemTotal: lots kB\n")
		_, ok := readMeminfo(p)
		Expect(ok).To(BeFalse())
		_, ok = readMeminfo(filepath.Join(dir, "missing"))
		Expect(ok).To(BeFalse())
	})

	It("takes the headroom of a cgroup v2 limit, and nothing when unlimited", func() {
		dir := GinkgoT().TempDir()
		write(dir, "memory.max", "1073741824\n")
		write(dir, "memory.current", "73741824\n")
		Expect(must(cgroupHeadroom(dir))).To(Equal(uint64(1000000000)))
		write(dir, "memory.current", "2000000000\n")
		Expect(must(cgroupHeadroom(dir))).To(Equal(uint64(0)))
		write(dir, "memory.max", "max\n")
		_, ok := cgroupHeadroom(dir)
		Expect(ok).To(BeFalse())
	})
})

var _ = Describe("checked arithmetic", func() {
	It("saturates and reports overflow", func() {
		var over bool
		Expect(checkedMul(1<<32, 1<<31, &over)).To(Equal(uint64(1 << 63)))
		Expect(over).To(BeFalse())
		Expect(checkedMul(1<<32, 1<<32, &over)).To(Equal(^uint64(0)))
		Expect(over).To(BeTrue())
		over = false
		Expect(checkedAdd(^uint64(0)-1, 1, &over)).To(Equal(^uint64(0)))
		Expect(over).To(BeFalse())
		Expect(checkedAdd(^uint64(0), 1, &over)).To(Equal(^uint64(0)))
		Expect(over).To(BeTrue())
	})
})

// must returns v after checking ok.
func must(v uint64, ok bool) uint64 {
	GinkgoHelper()
	Expect(ok).To(BeTrue())
	return v
}
