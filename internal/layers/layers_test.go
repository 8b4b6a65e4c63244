package layers_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/internal/layers"
)

func TestLayers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "internal/layers")
}

// imports returns, for every package directory below root, the module
// packages its non-test Go files import (every build tag counts).
func imports(root string) map[string][]string {
	GinkgoHelper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if q, ok := strings.CutPrefix(p, layers.Module+"/"); ok && !slices.Contains(out[rel], q) {
				out[rel] = append(out[rel], q)
			}
		}
		if _, ok := out[rel]; !ok {
			out[rel] = nil
		}
		return nil
	})
	Expect(err).NotTo(HaveOccurred())
	return out
}

// violations lists "pkg imports dep" for every forbidden import.
func violations(pkgs map[string][]string) []string {
	var bad []string
	for pkg, deps := range pkgs {
		for pattern, forbidden := range layers.Forbidden() {
			if !layers.Match(pattern, pkg) {
				continue
			}
			for _, dep := range deps {
				for _, f := range forbidden {
					if layers.Match(f, dep) && !layers.Match(f, pkg) {
						bad = append(bad, pkg+" imports "+dep+" (forbidden by "+pattern+" -> "+f+")")
					}
				}
			}
		}
	}
	slices.Sort(bad)
	return bad
}

var _ = Describe("the dependency layers", func() {
	It("hold in the tree: no engine imports the runner, the registry or anything above", func() {
		root, err := filepath.Abs("../..")
		Expect(err).NotTo(HaveOccurred())
		pkgs := imports(root)
		Expect(pkgs).To(HaveKey("harness"), "the walk found the tree")
		Expect(pkgs).To(HaveKey("isolate"))
		Expect(violations(pkgs)).To(BeEmpty())
	})

	It("catch an engine that imports the runner, and a leaf that imports an engine", func() {
		Expect(violations(map[string][]string{
			"isolate":          {"executor", "harness"},
			"native/runtime":   {"fuzz"},
			"compare":          {"native"},
			"executor/builtin": {"isolate", "native"},
			"native/cgen":      {"native"},
		})).To(Equal([]string{
			"compare imports native (forbidden by compare -> native/...)",
			"isolate imports harness (forbidden by isolate/... -> harness/...)",
			"native/cgen imports native (forbidden by native/cgen -> native)",
			"native/runtime imports fuzz (forbidden by native/... -> fuzz/...)",
		}))
	})

	It("match a pattern and the packages below it, never a sibling with the same prefix", func() {
		Expect(layers.Match("native/...", "native")).To(BeTrue())
		Expect(layers.Match("native/...", "native/runtime")).To(BeTrue())
		Expect(layers.Match("native/...", "nativex")).To(BeFalse())
		Expect(layers.Match("executor", "executor/builtin")).To(BeFalse())
	})
})
