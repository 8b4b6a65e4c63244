package build

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rextio/rxeq/native/runtime"
)

// batchKey hashes everything that determines a batch library: its
// members' sources and renames, the runtime it links against, the
// compiler and the flags.
func batchKey(srcs [][]byte, wrappers [][]byte, rtKey string, cc *Compiler) string {
	parts := make([][]byte, 0, 2*len(srcs))
	for i := range srcs {
		parts = append(parts, srcs[i], wrappers[i])
	}
	return buildKey("rxeq-native-batch-v1", parts, rtKey, cc)
}

// Batch returns the path of a valid cached library holding every source
// in srcs, member i's C functions renamed by renames[i] (from → to, by a
// wrapper file of #defines around its unchanged source), compiling it in
// one compiler run when the cache has none. cached says whether the cache
// had it.
func (tc *Toolchain) Batch(ctx context.Context, srcs [][]byte, renames []map[string]string) (path string, cached bool, err error) {
	wrappers := make([][]byte, len(srcs))
	for i, r := range renames {
		var b strings.Builder
		fmt.Fprintf(&b, "/* Batch member %d: %s, its functions renamed. */\n", i, batchSource(i))
		names := make([]string, 0, len(r))
		for from := range r {
			names = append(names, from)
		}
		slices.Sort(names)
		for _, from := range names {
			fmt.Fprintf(&b, "#define %s %s\n", from, r[from])
		}
		fmt.Fprintf(&b, "#include \"%s\"\n", batchSource(i))
		wrappers[i] = []byte(b.String())
	}
	e := entry{dir: tc.Dir, key: batchKey(srcs, wrappers, tc.RuntimeKey, tc.CC), prefix: "batch-"}
	cached = true
	err = e.ensure(func() error {
		cached = false
		files := map[string][]byte{runtime.HeaderName: []byte(runtime.Header())}
		order := []string{runtime.HeaderName}
		var units []string
		for i := range srcs {
			files[batchSource(i)] = srcs[i]
			files[batchUnit(i)] = wrappers[i]
			order = append(order, batchSource(i), batchUnit(i))
			units = append(units, batchUnit(i))
		}
		args := append(append([]string(nil), buildFlags...), "-iquote", ".")
		inputs := append(units, tc.RuntimePath, "-lm")
		if tc.CC.isTCC() {
			args = append(append([]string(nil), buildFlags...), "-I.")
			inputs = append(inputs, "-Wl,-rpath,"+filepath.Dir(tc.RuntimePath))
		}
		return e.compile(ctx, tc.CC, files, order, args, inputs, tc.Timeout, units[0])
	})
	return e.object(), cached, err
}

// batchSource and batchUnit name member i's generated translation unit
// and its wrapper in a batch's source directory.
func batchSource(i int) string { return fmt.Sprintf("rx_gen_%d.c", i) }
func batchUnit(i int) string   { return fmt.Sprintf("rx_member_%d.c", i) }
