package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/rextio/rxeq/internal/subproc"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Compiler is a resolved C or C++ compiler command: the program, its extra
// arguments and its identity (the output of `CC --version`), all of which
// are part of the cache keys of what it builds.
type Compiler struct {
	spec  string // $CC as given
	path  string
	args  []string
	ident string
}

// FindCompiler resolves cc ("" means "cc"). CC may carry
// arguments ("gcc -m64"); they are split on spaces and passed first. Asking
// for its identity is bounded by timeout like any compiler run.
//
// When memoDir is not "", the identity is remembered there (a file
// cc-HASH.id, HASH covering the path, the arguments and the resolved
// binary's device, inode, size and modification time), so that the
// processes sharing a cache directory ask each compiler once, not once per
// build: a replaced or upgraded compiler binary has a new HASH.
func FindCompiler(ctx context.Context, cc string, timeout time.Duration, memoDir string) (*Compiler, error) {
	if strings.TrimSpace(cc) == "" {
		cc = "cc"
	}
	fields := strings.Fields(cc)
	path, err := exec.LookPath(fields[0])
	if err != nil {
		return nil, fmt.Errorf("%w: no C compiler: CC=%q not found (%v); install one or point CC at it", ErrCompiler, cc, err)
	}
	memo := identMemo(memoDir, path, fields[1:])
	if memo != "" {
		if b, err := readEntryFile(memo); err == nil && len(b) > 0 {
			return &Compiler{spec: cc, path: path, args: fields[1:], ident: string(b)}, nil
		}
	}
	var out bytes.Buffer
	if err := runCompiler(ctx, path, append(fields[1:], "--version"), "", &out, timeout); err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("%w: CC=%q --version failed: %v: %s", ErrCompiler, cc, err, bytes.TrimSpace(out.Bytes()))
	}
	if memo != "" && out.Len() > 0 {
		_ = writeAtomic(memo, out.Bytes(), 0o600) // a memo that cannot be written is asked again
	}
	return &Compiler{spec: cc, path: path, args: fields[1:], ident: out.String()}, nil
}

// identMemo returns the memo file of a compiler's identity in dir, or ""
// when dir is "" or the binary cannot be examined.
func identMemo(dir, path string, args []string) string {
	if dir == "" {
		return ""
	}
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d %d %d %d", path, strings.Join(args, "\x00"), st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano())
	return filepath.Join(dir, "cc-"+hex.EncodeToString(h.Sum(nil))[:32]+".id")
}

// libProbes memoizes hasLib per compiler and library for the process.
var libProbes sync.Map // "path\x00args\x00lib" -> bool

// HasLib reports whether the compiler's linker finds the library file name
// (`CC -print-file-name=NAME` answers a path, not the bare name). The answer
// is memoized for the process.
func (c *Compiler) HasLib(ctx context.Context, name string, timeout time.Duration) bool {
	key := c.path + "\x00" + strings.Join(c.args, " ") + "\x00" + name
	if v, ok := libProbes.Load(key); ok {
		return v.(bool)
	}
	var out bytes.Buffer
	err := runCompiler(ctx, c.path, append(append([]string(nil), c.args...), "-print-file-name="+name), "", &out, timeout)
	found := err == nil && filepath.IsAbs(strings.TrimSpace(out.String()))
	if err == nil {
		libProbes.Store(key, found)
	}
	return found
}

// isTCC reports whether the compiler is the Tiny C Compiler, whose
// options differ (no -iquote; a library given by path is recorded by its
// base name).
func (c *Compiler) isTCC() bool { return strings.HasPrefix(c.ident, "tcc version") }

// FirstLine returns the compiler's first line of `--version` output.
func (c *Compiler) FirstLine() string {
	line, _, _ := strings.Cut(c.ident, "\n")
	return strings.TrimSpace(line)
}

// errCompileTimeout marks a compiler run that exceeded its time limit.
var errCompileTimeout = errors.New("compile timed out")

// runCompiler runs path with args in dir (the current directory if ""),
// output to out, in a process group of its own. When the run exceeds
// timeout (0 means DefaultCompileTimeout) or ctx ends, the whole group is
// killed (the driver and the cc1/as/ld it started), and Wait gives up on
// pipes a stray grandchild still holds after a short delay. The driver
// runs under a subproc.Guard, a shell that gets a parent-death signal on
// Linux and then kills its whole group, so a killed rxeq (even with
// SIGKILL) leaves no compiler behind: a parent-death signal on the driver
// alone would leave its cc1plus running.
func runCompiler(ctx context.Context, path string, args []string, dir string, out io.Writer, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultCompileTimeout
	}
	tctx, cancel := context.WithTimeoutCause(ctx, timeout, errCompileTimeout)
	defer cancel()
	argv := subproc.Guard(append([]string{path}, args...))
	cmd := exec.CommandContext(tctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C") // plain ASCII diagnostics
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = subproc.GuardProcAttr()
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		// The group's id is the driver's pid (Setpgid with Pgid 0).
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if err != nil && errors.Is(context.Cause(tctx), errCompileTimeout) && ctx.Err() == nil {
		return fmt.Errorf("%w after %v (the compiler and its children were killed)", errCompileTimeout, timeout)
	}
	return err
}

// CacheDir resolves and secures a cache directory: dir, else
// os.UserCacheDir()/rxeq (DefaultCacheDir). It is created with mode 0700;
// an existing one must be a directory owned by the current user that
// neither group nor others can write.
func CacheDir(dir string) (string, error) {
	dir, err := DefaultCacheDir(dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("%w: %v", ErrCache, err)
	}
	if err := checkPrivate(dir, true); err != nil {
		return "", err
	}
	return dir, nil
}

// DefaultCacheDir resolves a cache directory as native.Compile does: dir, else
// os.UserCacheDir()/rxeq. It neither creates nor checks it.
func DefaultCacheDir(dir string) (string, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("%w: no cache directory (set Options.CacheDir: $RXEQ_CACHE for the rxeq command): %v", ErrCache, err)
		}
		dir = filepath.Join(base, "rxeq")
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
	return checkPrivateInfo(path, fi, wantDir)
}

// checkPrivateInfo is checkPrivate on a FileInfo already at hand.
func checkPrivateInfo(path string, fi fs.FileInfo, wantDir bool) error {
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
