// Package layers states the direction of rxeq's dependencies, and its test
// holds the tree to it:
//
//	program, tensor, executor, compare, lock   leaves (program ← executor)
//	    ← engines: oracle, fallback, native (cgen and build below its
//	      loader and calls), isolate, external
//	    ← executor/builtin (the only registry of engines by name)
//	    ← harness, fuzz
//	    ← reports, rxginkgo, selftest
//	    ← cmd/rxeq
//
// No engine imports the runner (harness), the fuzzer, the registry or
// anything above them; the leaves import no engine. Forbidden lists what
// each package may not import; the test reads every non-test Go file of
// the tree (all build tags) and fails on a forbidden import.
package layers

// Module is rxeq's module path.
const Module = "github.com/rextio/rxeq"

// Forbidden maps a package (its path below Module; a trailing "/..."
// covers the packages below it too) to the packages it must not import,
// in the same form.
func Forbidden() map[string][]string {
	above := []string{"harness/...", "fuzz/...", "executor/builtin", "reports/...", "rxginkgo/...", "selftest/...", "cmd/..."}
	engines := []string{"oracle/...", "fallback/...", "native/...", "onnx/...", "isolate/...", "external/...", "internal/subproc/..."}
	leaf := append(append([]string{}, above...), engines...)
	return map[string][]string{
		"executor":    leaf,
		"compare":     leaf,
		"lock":        leaf,
		"tensor/...":  append(leaf, "program/..."),
		"program/...": leaf,
		// The engines: below the registry and the runner.
		"oracle/...":           above,
		"fallback/...":         above,
		"native/...":           above,
		"onnx/...":             above,
		"isolate/...":          above,
		"external/...":         above,
		"internal/subproc/...": above,
		// Code generation and the toolchain sit below the loader and
		// the calls, and apart from each other.
		"native/cgen":      append([]string{"native", "native/build", "native/runtime"}, above...),
		"native/build":     append([]string{"native", "native/cgen"}, above...),
		"executor/builtin": {"harness/...", "fuzz/...", "reports/...", "rxginkgo/...", "selftest/...", "cmd/..."},
		"harness/...":      {"fuzz/...", "reports/...", "rxginkgo/...", "selftest/...", "cmd/..."},
		"fuzz/...":         {"reports/...", "rxginkgo/...", "selftest/...", "cmd/..."},
		"reports/...":      {"cmd/..."},
		"rxginkgo/...":     {"cmd/..."},
		"selftest/...":     {"cmd/..."},
	}
}

// Match reports whether path (below Module) is pattern or, for a pattern
// ending in "/...", below it.
func Match(pattern, path string) bool {
	if base, ok := cutSuffix(pattern, "/..."); ok {
		return path == base || len(path) > len(base) && path[:len(base)+1] == base+"/"
	}
	return path == pattern
}

func cutSuffix(s, suffix string) (string, bool) {
	if len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}
