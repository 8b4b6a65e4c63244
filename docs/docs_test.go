package docs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/tensor"
)

// The documentation in this directory is the only reference users see, so
// these specs hold it to the code: every builtin, every directive, every
// edge(kind) input distribution, every rxeq command (its flags: see
// cmd/rxeq/flags_test.go) and every fuzz feature the code knows is
// documented, every relative link and anchor resolves, and every complete .rx program shown in a fenced ```go block checks and
// passes the harness.

// pendingDocs are pages that docs/README.md links to but that another
// change writes; a link to one is accepted while the file is absent.
var pendingDocs = map[string]bool{"executor-protocol.md": true}

// doc is one Markdown page split into what the specs look at.
type doc struct {
	name     string
	headings []string // heading texts, outside code blocks
	cells    []string // the first cell of every table row, outside code blocks
	blocks   []block  // fenced code blocks
	text     string
}

type block struct {
	lang string
	body string
	line int
}

func parseDoc(name, text string) doc {
	d := doc{name: name, text: text}
	var cur *block
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if cur == nil {
				cur = &block{lang: strings.TrimPrefix(trimmed, "```"), line: i + 1}
			} else {
				d.blocks = append(d.blocks, *cur)
				cur = nil
			}
			continue
		}
		if cur != nil {
			cur.body += line + "\n"
			continue
		}
		switch {
		case strings.HasPrefix(line, "#"):
			d.headings = append(d.headings, strings.TrimSpace(strings.TrimLeft(line, "#")))
		case strings.HasPrefix(trimmed, "|"):
			cells := strings.Split(strings.Trim(trimmed, "|"), "|")
			d.cells = append(d.cells, strings.TrimSpace(cells[0]))
		}
	}
	return d
}

func readDoc(name string) doc {
	GinkgoHelper()
	b, err := os.ReadFile(name)
	Expect(err).NotTo(HaveOccurred())
	return parseDoc(name, string(b))
}

// wordRE matches name as a whole word: not preceded or followed by a
// character that could continue it (so Max does not match Maximum, and
// //rx:lock does not match //rx:lock-not).
func wordRE(name string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_:-])` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9_-])`)
}

// undocumented returns the names that appear in no heading and in no
// table row's first cell of d.
func undocumented(d doc, names []string) []string {
	var missing []string
	for _, name := range names {
		re := wordRE(name)
		found := false
		for _, s := range append(append([]string(nil), d.headings...), d.cells...) {
			if re.MatchString(s) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, name)
		}
	}
	return missing
}

// slug is GitHub's anchor for a heading: lower case, punctuation other
// than '-' and '_' dropped, spaces turned into '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

var _ = Describe("the docs", func() {
	pages, err := filepath.Glob("*.md")
	if err != nil || len(pages) == 0 {
		panic(fmt.Sprintf("no Markdown pages in docs/: %v", err))
	}

	Describe("coverage of the language", func() {
		It("documents every builtin in language.md, as a heading or a table row", func() {
			names := program.Builtins()
			Expect(names).To(ContainElements("MatMul", "Softmax", "Argmax", "CheckedRem", "CheckedDiv"))
			Expect(undocumented(readDoc("language.md"), names)).To(BeEmpty(),
				"builtins the checker knows but docs/language.md does not document")
		})

		It("gives every builtin a section of its own in language.md", func() {
			d := readDoc("language.md")
			for _, name := range program.Builtins() {
				Expect(d.headings).To(ContainElement("`"+name+"`"), "no section ### `%s` in docs/language.md", name)
			}
		})

		It("documents every directive in directives.md, as a heading or a table row", func() {
			var names []string
			for _, n := range program.Directives() {
				names = append(names, "//rx:"+n)
			}
			Expect(names).To(ContainElements("//rx:scenario", "//rx:lock", "//rx:lock-not"))
			Expect(undocumented(readDoc("directives.md"), names)).To(BeEmpty(),
				"directives the checker knows but docs/directives.md does not document")
		})

		It("documents every edge(kind) input distribution in directives.md", func() {
			var names []string
			for _, kind := range tensor.EdgeKinds {
				names = append(names, "edge("+kind+")")
			}
			Expect(names).To(ContainElement("edge(large)"))
			Expect(undocumented(readDoc("directives.md"), names)).To(BeEmpty(),
				"edge kinds the input generator knows but docs/directives.md does not document")
		})
	})

	It("gives every rxeq command a section in cli.md", func() {
		src, err := os.ReadFile(filepath.Join("..", "cmd", "rxeq", "main.go"))
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, m := range regexp.MustCompile(`"([a-z]+)":\s*cmd[A-Z]`).FindAllSubmatch(src, -1) {
			names = append(names, "rxeq "+string(m[1]))
		}
		Expect(names).To(ContainElements("rxeq run", "rxeq fuzz"))
		Expect(undocumented(readDoc("cli.md"), names)).To(BeEmpty(),
			"commands cmd/rxeq dispatches but docs/cli.md has no section for")
	})

	// Every flag of every command is checked against its section of
	// cli.md by cmd/rxeq's own suite (flags_test.go), which reads the
	// commands' flag sets rather than their source.

	It("lists every feature of rxeq fuzz --features in cli.md", func() {
		text := readDoc("cli.md").text
		names := strings.Split(fuzz.AllFeatures.String(), ",")
		Expect(names).To(ContainElement("matmul"))
		for _, name := range names {
			Expect(text).To(ContainSubstring("`"+name+"`"), "docs/cli.md does not list the fuzz feature %s", name)
		}
	})

	Describe("the coverage check itself", func() {
		page := parseDoc("x.md", "# `Softmax`\n\n| name |\n| --- |\n| `Max` |\n\n```go\nx := Tanh(y)\n```\n\nTanh in prose.\n\n## //rx:lock-not\n")

		It("finds names in headings and in the first cell of table rows", func() {
			Expect(undocumented(page, []string{"Softmax", "Max"})).To(BeEmpty())
		})

		It("reports a name mentioned only in prose or in code", func() {
			Expect(undocumented(page, []string{"Tanh"})).To(Equal([]string{"Tanh"}))
		})

		It("matches whole names only", func() {
			Expect(undocumented(page, []string{"Maximum", "Soft", "//rx:lock"})).To(Equal([]string{"Maximum", "Soft", "//rx:lock"}))
			Expect(undocumented(page, []string{"//rx:lock-not"})).To(BeEmpty())
		})
	})

	It("links only to pages and headings that exist", func() {
		anchors := map[string]map[string]bool{}
		for _, p := range pages {
			anchors[p] = map[string]bool{}
			for _, h := range readDoc(p).headings {
				anchors[p][slug(h)] = true
			}
		}
		for _, p := range pages {
			for _, m := range linkRE.FindAllStringSubmatch(readDoc(p).text, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				if file == "" {
					file = p
				}
				if pendingDocs[file] {
					continue
				}
				_, err := os.Stat(file)
				Expect(err).NotTo(HaveOccurred(), "%s links to %s, which does not exist", p, target)
				if anchor != "" && strings.HasSuffix(file, ".md") {
					Expect(anchors[file]).To(HaveKey(anchor), "%s links to %s: %s has no such heading", p, target, file)
				}
			}
		}
	})

	It("links every page from the index", func() {
		index := readDoc("README.md").text
		for _, p := range pages {
			if p != "README.md" {
				Expect(index).To(ContainSubstring("("+p+")"), "docs/README.md does not link %s", p)
			}
		}
	})

	Describe("example programs", func() {
		for _, p := range pages {
			for _, b := range readDoc(p).blocks {
				if b.lang != "go" || !regexp.MustCompile(`(?m)^package `).MatchString(b.body) || strings.Contains(b.body, "import") {
					continue // not a complete .rx program
				}
				name := fmt.Sprintf("%s:%d", p, b.line)
				It("checks and agrees with the oracle: "+name, func() {
					f, err := program.Parse(name, []byte(b.body))
					Expect(err).NotTo(HaveOccurred())
					res, err := harness.Run(context.Background(), []*program.File{f}, harness.Options{
						Executors: []executor.Executor{fallback.Executor{}},
						Parallel:  1,
					})
					Expect(err).NotTo(HaveOccurred())
					for _, c := range res.Cases {
						Expect(c.Status).To(Equal(harness.StatusPass), "%s: %s", c.Name(), c.Message)
					}
					for _, l := range res.Locks {
						Expect(l.OK()).To(BeTrue(), "lock of %s: %s%s", l.Function, l.Error, l.Result.Message)
					}
				})
			}
		}
	})
})
