package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rextio/rxeq/native/runtime"
)

// FindCXX resolves the C++ compiler of the torch runtime: cxx, else
// "c++".
func FindCXX(ctx context.Context, cxx string, timeout time.Duration) (*Compiler, error) {
	if strings.TrimSpace(cxx) == "" {
		cxx = "c++"
	}
	c, err := FindCompiler(ctx, cxx, timeout, "")
	if err != nil {
		return nil, fmt.Errorf("%w (the torch runtime needs a C++17 compiler: CXX)", err)
	}
	return c, nil
}

// TorchRuntimeKey hashes everything that determines a C++ runtime library:
// what runtimeKey covers (its sources and the C compiler), the C++
// compiler's identity and flags, the link flags and the framework version.
func TorchRuntimeKey(lib runtime.Lib, cc, cxx *Compiler) string {
	return hashParts("rxeq-runtime-cxx-v1", runtimeKey(lib, cc), strings.Join(lib.CXXSources, " "),
		strings.Join(lib.CXXFlags, " "), strings.Join(lib.LinkFlags, " "), lib.Version,
		cxx.path, strings.Join(cxx.args, " "), cxx.ident)
}

// cFlagsNoLink are the C flags of an object compile (buildFlags without
// -shared).
func cFlagsNoLink() []string {
	var out []string
	for _, f := range buildFlags {
		if f != "-shared" {
			out = append(out, f)
		}
	}
	return out
}

// BuildCXXRuntime returns the path and key of a valid cached runtime
// library with C++ sources (the torch runtime), building it when the cache
// has none: each C source compiled with cc, each C++ source with cxx, then
// linked -shared by cxx with the library's link flags. Files appear in the
// cache as for every build (private source directory, temporary object,
// checksum, rename), under the entry's lock.
func BuildCXXRuntime(ctx context.Context, lib runtime.Lib, cc, cxx *Compiler, dir string, timeout time.Duration) (path, key string, err error) {
	e := entry{dir: dir, key: TorchRuntimeKey(lib, cc, cxx), prefix: "rt-"}
	err = e.ensure(func() error { return e.compileCXX(ctx, lib, cc, cxx, timeout) })
	if err != nil {
		return "", "", err
	}
	return e.object(), e.key, nil
}

func (e entry) compileCXX(ctx context.Context, lib runtime.Lib, cc, cxx *Compiler, timeout time.Duration) error {
	sd := e.srcDir()
	if err := os.MkdirAll(sd, 0o700); err != nil {
		return fmt.Errorf("%w: %v", ErrCache, err)
	}
	if err := checkPrivate(sd, true); err != nil {
		return err
	}
	for _, f := range lib.Files {
		if err := writeAtomic(filepath.Join(sd, f.Name), []byte(f.Text), 0o600); err != nil {
			return fmt.Errorf("%w: %v", ErrCache, err)
		}
	}
	run := func(c *Compiler, main string, args ...string) error {
		var out bytes.Buffer
		argv := append(append([]string(nil), c.args...), args...)
		if err := runCompiler(ctx, c.path, argv, sd, &out, timeout); err != nil {
			if ctx.Err() != nil && !errors.Is(err, errCompileTimeout) {
				return context.Cause(ctx)
			}
			return fmt.Errorf("%w: %q failed on %s: %v\n%s", ErrCompiler, c.spec, filepath.Join(sd, main), err, strings.TrimSpace(out.String()))
		}
		return nil
	}
	var objs []string
	for _, s := range lib.CSources {
		o := s + ".o"
		args := append(cFlagsNoLink(), "-iquote", ".", "-c", s, "-o", o)
		if err := run(cc, s, args...); err != nil {
			return err
		}
		objs = append(objs, o)
	}
	for _, s := range lib.CXXSources {
		o := s + ".o"
		args := append(append([]string(nil), lib.CXXFlags...), "-iquote", ".", "-c", s, "-o", o)
		if err := run(cxx, s, args...); err != nil {
			return err
		}
		objs = append(objs, o)
	}
	tmp, err := os.CreateTemp(e.dir, ".tmp-*.so")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCache, err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpPath)
	args := append([]string{"-shared"}, runtimeLinkFlags...)
	args = append(append(append(args, "-o", tmpPath), objs...), lib.LinkFlags...)
	args = append(args, "-lm")
	if err := run(cxx, lib.CXXSources[len(lib.CXXSources)-1], args...); err != nil {
		return err
	}
	for _, o := range objs {
		os.Remove(filepath.Join(sd, o))
	}
	return e.install(tmpPath)
}
