// Package build is the native backend's toolchain and content-addressed
// build cache: it resolves the C and C++ compilers (FindCompiler,
// FindCXX), secures the cache directory (CacheDir), builds the runtime
// libraries (BuildRuntime for native/runtime's C kernels, BuildCXXRuntime
// for the torch runtime's C++) and a generated program's library, alone
// (Toolchain.Program) or several in one compiler run (Toolchain.Batch),
// each once per cache key.
//
// It compiles C but never loads or calls it, and does not use cgo: it
// builds in every configuration (CGO_ENABLED=0 too). It knows nothing of
// the IR or of code generation (package native/cgen): a program's library
// is built from its C source as given. Package native resolves a
// Toolchain from its Options, builds through it and loads the result.
//
// The compilers and the cache share the package because the cache keys
// cover the compilers' identities and flags, and both enforce the same
// private-directory rules (the compiler identity memo lives in the cache).
//
// # Cache
//
// Every entry is keyed by the SHA-256 of all that determines it (its
// sources, the runtime header and library key it links against, the
// compiler's path, arguments and `--version` output, and the flags). An
// entry holds KEY.so, KEY.sum (the object's SHA-256, checked before
// every use, so a truncated or corrupt object is rebuilt) and src-KEY/
// (the sources, kept so that compile errors can name a file); runtime
// libraries are prefixed rt-, batches batch-. Entries are opened without
// following links and without blocking and must be private regular files;
// every file appears through a rename; builders of one key serialise on
// KEY.lock (flock); temporaries a killed build left are swept after an
// hour. Each compiler run has a deadline and runs in a process group of
// its own that is killed as a whole on timeout or cancellation.
//
// Errors wrap ErrCompiler (a missing or failing compiler: the text names
// CC, its stderr and the source's path) or ErrCache (an unusable cache);
// package native re-exports both.
package build
