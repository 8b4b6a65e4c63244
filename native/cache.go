package native

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rextio/rxeq/native/runtime"
)

// Flags are the C compiler flags of every build (DESIGN "Native backend");
// the library is linked with -lm after the sources.
var buildFlags = []string{"-std=c11", "-O2", "-fPIC", "-shared", "-ffp-contract=off", "-Wall", "-Werror"}

// Flags returns the compiler flags every native build uses.
func Flags() []string { return append([]string(nil), buildFlags...) }

// compiler is a resolved $CC: the program, its extra arguments and its
// identity (the output of `CC --version`).
type compiler struct {
	spec  string // $CC as given
	path  string
	args  []string
	ident string
}

// findCompiler resolves cc ("" means $CC, else "cc"). CC may carry
// arguments ("gcc -m64"); they are split on spaces and passed first.
func findCompiler(ctx context.Context, cc string) (*compiler, error) {
	if cc == "" {
		cc = os.Getenv("CC")
	}
	if strings.TrimSpace(cc) == "" {
		cc = "cc"
	}
	fields := strings.Fields(cc)
	path, err := exec.LookPath(fields[0])
	if err != nil {
		return nil, fmt.Errorf("%w: no C compiler: CC=%q not found (%v); install one or point CC at it", ErrCompiler, cc, err)
	}
	out, err := exec.CommandContext(ctx, path, append(fields[1:], "--version")...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%w: CC=%q --version failed: %v: %s", ErrCompiler, cc, err, bytes.TrimSpace(out))
	}
	return &compiler{spec: cc, path: path, args: fields[1:], ident: string(out)}, nil
}

// Identity returns the compiler's first line of `--version` output.
func (c *compiler) firstLine() string {
	line, _, _ := strings.Cut(c.ident, "\n")
	return strings.TrimSpace(line)
}

// cacheDir resolves and secures the cache directory: dir, else
// $RXEQ_CACHE, else os.UserCacheDir()/rxeq. It is created with mode 0700;
// an existing one must be a directory owned by the current user that
// neither group nor others can write.
func cacheDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv("RXEQ_CACHE")
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("%w: no cache directory (set RXEQ_CACHE): %v", ErrCache, err)
		}
		dir = filepath.Join(base, "rxeq")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("%w: %v", ErrCache, err)
	}
	if err := checkPrivate(dir, true); err != nil {
		return "", err
	}
	return dir, nil
}

// checkPrivate refuses a path that is not owned by the current user or that
// group or others can write.
func checkPrivate(path string, wantDir bool) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCache, err)
	}
	if wantDir && !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrCache, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%w: refusing %s: owned by uid %d, not by the current user (uid %d); use a cache directory of your own (RXEQ_CACHE)",
			ErrCache, path, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w: refusing %s: mode %04o lets group or others write it, so native code loaded from it could be replaced; chmod 700 it or set RXEQ_CACHE",
			ErrCache, path, fi.Mode().Perm())
	}
	return nil
}

// cacheKey hashes everything that determines the built library.
func cacheKey(src []byte, cc *compiler) string {
	h := sha256.New()
	part := func(s string) { fmt.Fprintf(h, "%d:%s\n", len(s), s) }
	part("rxeq-native-v1")
	part(string(src))
	part(runtime.Header())
	part(runtime.Source())
	part(cc.path)
	part(strings.Join(cc.args, " "))
	part(cc.ident)
	part(strings.Join(buildFlags, " ") + " -lm")
	return hex.EncodeToString(h.Sum(nil))
}

// entry is one cache entry's files.
type entry struct {
	dir, key string
}

func (e entry) object() string { return filepath.Join(e.dir, e.key+".so") }
func (e entry) sum() string    { return filepath.Join(e.dir, e.key+".sum") }
func (e entry) lock() string   { return filepath.Join(e.dir, e.key+".lock") }
func (e entry) srcDir() string { return filepath.Join(e.dir, "src-"+e.key[:24]) }

// GeneratedFile is the name of the generated translation unit in an
// entry's source directory.
const GeneratedFile = "rx_gen.c"

// valid reports whether the cached object exists, is private and matches
// the checksum stored beside it (a truncated or corrupt object does not).
func (e entry) valid() bool {
	if checkPrivate(e.object(), false) != nil {
		return false
	}
	obj, err := os.ReadFile(e.object())
	if err != nil {
		return false
	}
	want, err := os.ReadFile(e.sum())
	if err != nil {
		return false
	}
	got := sha256.Sum256(obj)
	return strings.TrimSpace(string(want)) == hex.EncodeToString(got[:])
}

// build returns the path of a valid cached library for src, compiling it
// when the cache has none (or a corrupt one). Builders of the same key
// serialise on a lock file; every file appears through a rename.
func build(ctx context.Context, src []byte, cc *compiler, dir string) (path string, cached bool, err error) {
	e := entry{dir: dir, key: cacheKey(src, cc)}
	if e.valid() {
		return e.object(), true, nil
	}
	unlock, err := lockFile(e.lock())
	if err != nil {
		return "", false, err
	}
	defer unlock()
	if e.valid() {
		return e.object(), true, nil
	}
	if err := compile(ctx, src, cc, e); err != nil {
		return "", false, err
	}
	return e.object(), false, nil
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCache, err)
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

// compile writes the sources into the entry's source directory, runs the
// compiler into a temporary object and installs it with its checksum.
func compile(ctx context.Context, src []byte, cc *compiler, e entry) error {
	sd := e.srcDir()
	if err := os.MkdirAll(sd, 0o700); err != nil {
		return fmt.Errorf("%w: %v", ErrCache, err)
	}
	files := map[string][]byte{GeneratedFile: src, runtime.HeaderName: []byte(runtime.Header()), runtime.SourceName: []byte(runtime.Source())}
	for _, name := range []string{runtime.HeaderName, runtime.SourceName, GeneratedFile} {
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
	args := append(append(append([]string(nil), cc.args...), buildFlags...), "-I.", "-o", tmpPath, GeneratedFile, "-lm")
	cmd := exec.CommandContext(ctx, cc.path, args...)
	cmd.Dir = sd
	cmd.Env = append(os.Environ(), "LC_ALL=C") // plain ASCII diagnostics
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: CC=%q failed on %s: %v\n%s", ErrCompiler, cc.spec,
			filepath.Join(sd, GeneratedFile), err, strings.TrimSpace(stderr.String()))
	}
	obj, err := os.ReadFile(tmpPath)
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
