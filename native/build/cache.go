package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rextio/rxeq/native/runtime"
)

// buildFlags are the C compiler flags of every build (DESIGN "Native
// backend"); the library is linked with -lm after the sources.
var buildFlags = []string{"-std=c11", "-O2", "-fPIC", "-shared", "-ffp-contract=off", "-Wall", "-Werror"}

// Flags returns the compiler flags every native build uses.
func Flags() []string { return append([]string(nil), buildFlags...) }

// runtimeLinkFlags are added when the runtime library itself is linked:
// calls inside it bind to its own definitions, so nothing loaded before it
// can interpose on them.
var runtimeLinkFlags = []string{"-Wl,-Bsymbolic"}

// DefaultCompileTimeout bounds one compiler run when the timeout given is
// zero (native.Options.CompileTimeout). A catalog program compiles in well under a second; the bound is
// for a compiler that hangs or a pathological input.
const DefaultCompileTimeout = 2 * time.Minute

// maxCacheFile is the largest cache entry file rxeq reads (objects and
// checksums): a planted huge or endless file is refused, not read.
const maxCacheFile = 1 << 30

// staleTemp is the age after which a leftover temporary file in the cache
// (from a process killed mid-build) is removed.
const staleTemp = time.Hour

// cacheKey hashes everything that determines a program's library: the
// generated source, the key of the runtime library it links against (which
// covers the runtime's sources), the compiler's identity and the flags.
func cacheKey(src []byte, runtimeKey string, cc *Compiler) string {
	return buildKey("rxeq-native-v2", [][]byte{src}, runtimeKey, cc)
}

// buildKey hashes a kind tag, the sources of a build (each
// length-prefixed, so no two lists hash alike), the runtime header and
// library key it builds against, the compiler's identity and the flags.
func buildKey(kind string, srcs [][]byte, runtimeKey string, cc *Compiler) string {
	parts := []string{kind}
	for _, src := range srcs {
		parts = append(parts, string(src))
	}
	return hashParts(append(parts, runtime.Header(), runtimeKey, cc.path, strings.Join(cc.args, " "), cc.ident,
		strings.Join(buildFlags, " ")+" -lm")...)
}

// runtimeKey hashes everything that determines a runtime library.
func runtimeKey(lib runtime.Lib, cc *Compiler) string {
	parts := []string{"rxeq-runtime-v1", lib.Name}
	for _, f := range lib.Files {
		parts = append(parts, f.Name, f.Text)
	}
	return hashParts(append(parts, strings.Join(lib.CSources, " "), strings.Join(lib.Args, " "),
		strings.Join(lib.Libs, " "), lib.ISA, cc.path, strings.Join(cc.args, " "), cc.ident,
		strings.Join(buildFlags, " ")+" "+strings.Join(runtimeLinkFlags, " ")+" -lm")...)
}

// hashParts is the hex SHA-256 of parts, each length-prefixed so that no
// two lists hash alike: the form of every cache key.
func hashParts(parts ...string) string {
	h := sha256.New()
	for _, s := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// entry is one cache entry's files.
type entry struct {
	dir, key string
	prefix   string // "" for programs, "rt-" for runtime libraries
}

func (e entry) object() string { return filepath.Join(e.dir, e.prefix+e.key+".so") }
func (e entry) sum() string    { return filepath.Join(e.dir, e.prefix+e.key+".sum") }
func (e entry) lock() string   { return filepath.Join(e.dir, e.prefix+e.key+".lock") }
func (e entry) srcDir() string { return filepath.Join(e.dir, e.prefix+"src-"+e.key[:24]) }

// GeneratedFile is the name of the generated translation unit in an
// entry's source directory.
const GeneratedFile = "rx_gen.c"

// readEntryFile reads a cache file that must be a private regular file: a
// symlink, FIFO, device or directory planted in its place is refused
// without blocking on it (the open is non-blocking and does not follow
// links, and the kind is checked on the opened descriptor).
func readEntryFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: refusing %s: not a regular file (%s)", ErrCache, path, fi.Mode().Type())
	}
	if err := checkPrivateInfo(path, fi, false); err != nil {
		return nil, err
	}
	if fi.Size() > maxCacheFile {
		return nil, fmt.Errorf("%w: refusing %s: %d bytes is larger than any library rxeq builds", ErrCache, path, fi.Size())
	}
	return io.ReadAll(io.LimitReader(f, maxCacheFile+1))
}

// valid reports whether the cached object exists, is a private regular
// file and matches the checksum stored beside it (a truncated, corrupt or
// planted object does not).
func (e entry) valid() bool {
	obj, err := readEntryFile(e.object())
	if err != nil {
		return false
	}
	want, err := readEntryFile(e.sum())
	if err != nil {
		return false
	}
	got := sha256.Sum256(obj)
	return strings.TrimSpace(string(want)) == hex.EncodeToString(got[:])
}

// RuntimeBuilt reports whether dir holds a valid runtime library lib
// built with cc, so that BuildRuntime would compile nothing.
func RuntimeBuilt(lib runtime.Lib, cc *Compiler, dir string) bool {
	return entry{dir: dir, key: runtimeKey(lib, cc), prefix: "rt-"}.valid()
}

// BuildRuntime returns the path and key of a valid cached runtime library
// lib (native/runtime's C sources) in dir, compiling it with cc when the
// cache has none (or a corrupt one).
func BuildRuntime(ctx context.Context, lib runtime.Lib, cc *Compiler, dir string, timeout time.Duration) (path, key string, err error) {
	e := entry{dir: dir, key: runtimeKey(lib, cc), prefix: "rt-"}
	err = e.ensure(func() error {
		files := map[string][]byte{}
		var order []string
		for _, f := range lib.Files {
			files[f.Name] = []byte(f.Text)
			order = append(order, f.Name)
		}
		args := append(append([]string(nil), buildFlags...), runtimeLinkFlags...)
		args = append(append(args, "-iquote", "."), lib.Args...)
		inputs := append(append(append([]string(nil), lib.CSources...), lib.Libs...), "-lm")
		return e.compile(ctx, cc, files, order, args, inputs, timeout, lib.CSources[len(lib.CSources)-1])
	})
	if err != nil {
		return "", "", err
	}
	return e.object(), e.key, nil
}

// Toolchain is what a program's library is built with: the cache
// directory, the program's compiler and the runtime library it links
// against (BuildRuntime or BuildCXXRuntime built it), and the bound of
// each compiler run.
type Toolchain struct {
	// Dir is the (secured: CacheDir) cache directory of program libraries.
	Dir string
	// CC is the program's compiler.
	CC *Compiler
	// RuntimePath and RuntimeKey are the runtime library's object and
	// cache key; the key is part of every program's key.
	RuntimePath, RuntimeKey string
	// Timeout bounds each compiler run (DefaultCompileTimeout when zero).
	Timeout time.Duration
}

// Program returns the path of a valid cached library for the program src
// (a generated translation unit including rx_runtime.h), linked against
// the toolchain's runtime library, compiling it when the cache has none (or
// a corrupt one). cached says whether the cache had it.
func (tc *Toolchain) Program(ctx context.Context, src []byte) (path string, cached bool, err error) {
	cc, rtPath, timeout := tc.CC, tc.RuntimePath, tc.Timeout
	e := entry{dir: tc.Dir, key: cacheKey(src, tc.RuntimeKey, cc)}
	cached = true
	err = e.ensure(func() error {
		cached = false
		files := map[string][]byte{GeneratedFile: src, runtime.HeaderName: []byte(runtime.Header())}
		args := append(append([]string(nil), buildFlags...), "-iquote", ".")
		inputs := []string{GeneratedFile, rtPath, "-lm"}
		if cc.isTCC() {
			// tcc has no -iquote, and records a library given by path
			// under its base name: it finds it through an rpath.
			args = append(append([]string(nil), buildFlags...), "-I.")
			inputs = append(inputs, "-Wl,-rpath,"+filepath.Dir(rtPath))
		}
		return e.compile(ctx, cc, files, []string{runtime.HeaderName, GeneratedFile}, args,
			inputs, timeout, GeneratedFile)
	})
	return e.object(), cached, err
}

// ensure makes the entry valid, running make under the entry's lock when it
// is not. Builders of the same key serialise on the lock file.
func (e entry) ensure(make func() error) error {
	if e.valid() {
		return nil
	}
	unlock, err := lockFile(e.lock())
	if err != nil {
		return err
	}
	defer unlock()
	if e.valid() {
		return nil
	}
	sweepStale(e.dir)
	return make()
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCache, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: refusing lock %s: not a regular file", ErrCache, path)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: locking %s: %v", ErrCache, path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// sweepStale removes temporary files that a killed build left in the cache
// directory (".tmp-*" older than staleTemp). A build in progress renames
// its temporaries long before that age.
func sweepStale(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	now := time.Now()
	for _, de := range ents {
		if !strings.HasPrefix(de.Name(), ".tmp-") {
			continue
		}
		if fi, err := de.Info(); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) > staleTemp {
			os.Remove(filepath.Join(dir, de.Name()))
		}
	}
}

// writeAtomic writes data to path through a temporary file and a rename.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp, perm)); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// compile writes files (in order) into the entry's source directory, runs
// the compiler with args, "-o" a temporary object, then inputs, and
// installs the object with its checksum. main names the file a compile
// error points the user at.
func (e entry) compile(ctx context.Context, cc *Compiler, files map[string][]byte, order, args, inputs []string, timeout time.Duration, main string) error {
	sd := e.srcDir()
	if err := os.MkdirAll(sd, 0o700); err != nil {
		return fmt.Errorf("%w: %v", ErrCache, err)
	}
	if err := checkPrivate(sd, true); err != nil {
		return err
	}
	for _, name := range order {
		if err := writeAtomic(filepath.Join(sd, name), files[name], 0o600); err != nil {
			return fmt.Errorf("%w: %v", ErrCache, err)
		}
	}
	tmp, err := os.CreateTemp(e.dir, ".tmp-*.so")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCache, err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpPath)
	argv := append(append(append(append([]string(nil), cc.args...), args...), "-o", tmpPath), inputs...)
	var out bytes.Buffer
	if err := runCompiler(ctx, cc.path, argv, sd, &out, timeout); err != nil {
		if errors.Is(err, errCompileTimeout) {
			return fmt.Errorf("%w: CC=%q on %s: %v; raise it with --compile-timeout (Options.CompileTimeout) if the program is really that large",
				ErrCompiler, cc.spec, filepath.Join(sd, main), err)
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return fmt.Errorf("%w: CC=%q failed on %s: %v\n%s", ErrCompiler, cc.spec,
			filepath.Join(sd, main), err, strings.TrimSpace(out.String()))
	}
	return e.install(tmpPath)
}

// install moves a freshly linked object into the entry, checksum first.
func (e entry) install(tmpPath string) error {
	obj, err := readEntryFile(tmpPath)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCache, err)
	}
	sum := sha256.Sum256(obj)
	if err := writeAtomic(e.sum(), []byte(hex.EncodeToString(sum[:])+"\n"), 0o600); err != nil {
		return fmt.Errorf("%w: %v", ErrCache, err)
	}
	if err := os.Chmod(tmpPath, 0o700); err != nil {
		return fmt.Errorf("%w: %v", ErrCache, err)
	}
	if err := os.Rename(tmpPath, e.object()); err != nil {
		return fmt.Errorf("%w: %v", ErrCache, err)
	}
	return nil
}
