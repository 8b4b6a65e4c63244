package native

import "github.com/rextio/rxeq/native/build"

// The toolchain and build cache live in package native/build; these
// forward to it for the callers that know them as package native's.

// DefaultCompileTimeout bounds one compiler run when Options.CompileTimeout
// is zero (build.DefaultCompileTimeout).
const DefaultCompileTimeout = build.DefaultCompileTimeout

// GeneratedFile is the name of the generated translation unit in a cache
// entry's source directory (build.GeneratedFile).
const GeneratedFile = build.GeneratedFile

// Flags returns the compiler flags every native build uses (build.Flags).
func Flags() []string { return build.Flags() }

// ScratchDir is where a throwaway build cache belongs (build.ScratchDir:
// /dev/shm on Linux when code may be loaded from it, else os.TempDir()).
func ScratchDir() string { return build.ScratchDir() }

// DefaultCacheDir resolves a cache directory as Compile does: dir, else
// os.UserCacheDir()/rxeq. It neither creates nor checks it
// (build.DefaultCacheDir).
func DefaultCacheDir(dir string) (string, error) { return build.DefaultCacheDir(dir) }
