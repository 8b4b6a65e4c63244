package main

import (
	"os"
	"regexp"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// commandNames returns the subcommands, sorted.
func commandNames() []string {
	var names []string
	for name := range commands() {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// helpFlags returns the long flags `rxeq CMD --help` lists.
func helpFlags(cmd string) []string {
	GinkgoHelper()
	code, out, errOut := rxeq(cmd, "--help")
	Expect(code).To(Equal(0), errOut)
	var flags []string
	for _, m := range regexp.MustCompile(`(?m)^\s+--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(out, -1) {
		flags = append(flags, m[1])
	}
	return flags
}

// cliSection returns the section of docs/cli.md headed "## `rxeq CMD`".
func cliSection(cmd string) string {
	GinkgoHelper()
	b, err := os.ReadFile("../../docs/cli.md")
	Expect(err).NotTo(HaveOccurred())
	_, rest, ok := strings.Cut(string(b), "\n## `rxeq "+cmd+"`\n")
	Expect(ok).To(BeTrue(), "docs/cli.md has no section ## `rxeq %s`", cmd)
	section, _, _ := strings.Cut(rest, "\n## ")
	return section
}

var _ = Describe("flag parsing", Label("e2e"), func() {
	It("prints a command's usage on stdout and exits 0 on -h and --help, for every command", func() {
		for _, c := range commandNames() {
			for _, h := range []string{"-h", "--help"} {
				code, out, errOut := rxeq(c, h)
				Expect(code).To(Equal(0), c+" "+h)
				Expect(out).To(HavePrefix("usage: rxeq "+c), c+" "+h)
				Expect(errOut).To(BeEmpty(), c+" "+h)
			}
		}
	})

	It("exits 2 on an unknown flag, naming it, with the usage on stderr", func() {
		for _, c := range commandNames() {
			code, out, errOut := rxeq(c, "--no-such-flag")
			Expect(code).To(Equal(2), c)
			Expect(out).To(BeEmpty(), c)
			Expect(errOut).To(HavePrefix("rxeq "+c+": unknown flag: --no-such-flag\n"), c)
			Expect(errOut).To(ContainSubstring("usage: rxeq "+c), c)
		}
	})

	It("exits 2 on a bad value or a missing one, naming the flag", func() {
		code, _, errOut := rxeq("run", "--parallel", "many")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`invalid argument "many" for "--parallel" flag`))
		code, _, errOut = rxeq("fuzz", "--time", "soon")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`invalid argument "soon" for "--time" flag`))
		code, _, errOut = rxeq("run", "--max-memory", "12XB")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`for "--max-memory" flag`))
		code, _, errOut = rxeq("run", "f.rx", "--json")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("flag needs an argument: --json"))
	})

	It("says a long flag takes two dashes when given one", func() {
		code, out, errOut := rxeq("run", "-json", "r.json")
		Expect(code).To(Equal(2))
		Expect(out).To(BeEmpty())
		Expect(errOut).To(ContainSubstring("-json: long flags take two dashes: --json"))
	})

	It("takes flags before, between and after the paths, and -- ends them", func() {
		code, out, errOut := rxeq("check", "--", "--batch")
		Expect(code).To(Equal(2))
		Expect(out).To(BeEmpty())
		Expect(errOut).To(ContainSubstring("--batch"), "a path, not a flag")
		code, out, errOut = rxeq("list", "../../scenarios/reference.rx", "--", "../../scenarios/error.rx")
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(ContainSubstring("reference-scoring"))
		Expect(out).To(ContainSubstring("remainder-by-zero"))
	})

	It("documents every flag of every command in that command's section of docs/cli.md", func() {
		seen := 0
		for _, c := range commandNames() {
			flags := helpFlags(c)
			if len(flags) == 0 {
				continue
			}
			section := cliSection(c)
			for _, f := range flags {
				seen++
				Expect(section).To(ContainSubstring("`--"+f), "docs/cli.md, section rxeq %s, does not document --%s", c, f)
			}
		}
		Expect(seen).To(BeNumerically(">", 40))
		Expect(helpFlags("run")).To(ContainElements("json", "batch", "executor", "max-memory"))
	})
})
