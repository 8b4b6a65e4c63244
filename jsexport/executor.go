package jsexport

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/external"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
)

// TFJSVersion is the TensorFlow.js release the executors run: the
// version of @tensorflow/tfjs-core, -backend-cpu and -backend-wasm that
// tfjs/package-lock.json pins and ci/setup.sh installs.
const TFJSVersion = "4.22.0"

// serveScript is the JavaScript side of the executors: it speaks
// rxeq.executor/v1 and runs the module each prepare carries.
//
//go:embed serve.js
var serveScript string

// serveEnv carries serveScript to node, which serveBootstrap runs (so
// that the command rxeq shows in messages stays one line).
const (
	serveEnv       = "RXEQ_SERVE_JS"
	serveBootstrap = `const s=process.env.RXEQ_SERVE_JS;delete process.env.RXEQ_SERVE_JS;` +
		`require("vm").runInThisContext(require("module").wrap(s),{filename:"rxeq-serve.js"})(exports,require,module,"rxeq-serve.js",".")`
)

// DefaultNode is the node binary when none is named: "node" on PATH
// (Debian's nodejs package installs /usr/bin/node).
const DefaultNode = "node"

// InstallHint is how to install the packages into dir, for the reason an
// executor is unavailable.
func InstallHint(dir string) string {
	return fmt.Sprintf("run ci/setup.sh, or: mkdir -p %s && cp tfjs/package.json tfjs/package-lock.json %s && (cd %s && npm ci --ignore-scripts); or set RXEQ_TFJS_DIR to a directory where that was done",
		dir, dir, dir)
}

// DefaultDir is where the executors look for the packages when no
// directory is named: os.UserCacheDir()/rxeq/tfjs/TFJSVersion (where
// ci/setup.sh installs them; RXEQ_TFJS_DIR overrides it in the rxeq
// command). "" when there is no user cache directory.
func DefaultDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "rxeq", "tfjs", TFJSVersion)
}

// ErrUnavailable is wrapped by Available's error: node cannot run, or the
// packages are not installed.
var ErrUnavailable = errors.New("unavailable")

// ExecutorOptions configure a TensorFlow.js executor.
type ExecutorOptions struct {
	// Node is the node binary ("": DefaultNode).
	Node string
	// Dir holds node_modules/@tensorflow/* ("": DefaultDir()).
	Dir string
	// Timeout bounds one prepare or run (0: external.DefaultTimeout).
	Timeout time.Duration
	// StartTimeout bounds starting the interpreter until its hello (0:
	// external.Options' default, Timeout when that is shorter than
	// external.DefaultStartTimeout).
	StartTimeout time.Duration
	// Version is rxeq's version, written into the modules' headers.
	Version string
}

func (o ExecutorOptions) node() string {
	if o.Node == "" {
		return DefaultNode
	}
	return o.Node
}

func (o ExecutorOptions) dir() string {
	if o.Dir == "" {
		return DefaultDir()
	}
	return o.Dir
}

// IsExecutor reports whether name is one of this package's executors,
// tfjs-cpu or tfjs-wasm.
func IsExecutor(name executor.Name) bool {
	return name == executor.TFJSCPU || name == executor.TFJSWasm
}

// NewExecutor returns the executor name (executor.TFJSCPU or
// executor.TFJSWasm): one long-lived node process, started by the first
// Prepare, with TensorFlow.js's cpu backend (kernels in JavaScript) or
// its wasm backend (XNNPACK compiled to WebAssembly, on one thread),
// that receives each program exported by Export in the prepare message
// (nothing is written to disk) and runs its functions. It is an external
// executor in every other respect (crashes and hangs fail one case and
// restart the process; errors come back with rxeq's texts). Close it
// when done.
func NewExecutor(name executor.Name, opts ExecutorOptions) (*external.Executor, error) {
	if !IsExecutor(name) {
		return nil, fmt.Errorf("%w: %q is not a TensorFlow.js executor (want tfjs-cpu or tfjs-wasm)", executor.ErrOptions, name)
	}
	version := opts.Version
	return external.New(external.Options{
		Name:         string(name),
		Command:      []string{opts.node(), "-e", serveBootstrap, string(name)},
		Env:          []string{"RXEQ_TFJS_DIR=" + opts.dir(), serveEnv + "=" + serveScript},
		Timeout:      opts.Timeout,
		StartTimeout: opts.StartTimeout,
		Generate: func(f *program.File, p *ir.Program) (*external.Module, error) {
			m, err := Export(p, Options{Source: f.Name, Version: version})
			if err != nil {
				return nil, err
			}
			return &external.Module{Format: "tfjs", Source: string(m.Source), Functions: m.Names}, nil
		},
	})
}

var availability sync.Map // "node\x00dir\x00name" -> error (nil: available)

// Available reports whether executor name can run with opts' node and
// package directory: nil, or an error wrapping ErrUnavailable that says
// what is missing and how to install it. The answer is cached per node,
// directory and executor for the life of the process.
func Available(name executor.Name, opts ExecutorOptions) error {
	if !IsExecutor(name) {
		return fmt.Errorf("%w: %q is not a TensorFlow.js executor", executor.ErrOptions, name)
	}
	key := opts.node() + "\x00" + opts.dir() + "\x00" + string(name)
	if v, ok := availability.Load(key); ok {
		err, _ := v.(error)
		return err
	}
	err := probe(name, opts.node(), opts.dir())
	availability.Store(key, err)
	return err
}

// probeScript loads the packages from RXEQ_TFJS_DIR and prints their
// versions; for the wasm backend it also checks its .wasm files.
const probeScript = `const p=require("path"),fs=require("fs"),r=require("module").createRequire(p.join(p.resolve(process.env.RXEQ_TFJS_DIR),"package.json"));` +
	`const pk=process.argv[1]==="tfjs-wasm"?"@tensorflow/tfjs-backend-wasm":"@tensorflow/tfjs-backend-cpu";` +
	`const v=[r("@tensorflow/tfjs-core/package.json").version,r(pk+"/package.json").version];` +
	`if(process.argv[1]==="tfjs-wasm"){const d=p.join(p.dirname(r.resolve(pk+"/package.json")),"dist");for(const f of ["tfjs-backend-wasm.wasm","tfjs-backend-wasm-simd.wasm"]){if(!fs.existsSync(p.join(d,f)))throw new Error("no "+f+" in "+d)}}` +
	`process.stdout.write(v.join(" "))`

func probe(name executor.Name, node, dir string) error {
	if dir == "" {
		return fmt.Errorf("%s is %w: no user cache directory to look in, and RXEQ_TFJS_DIR is not set (%s)", name, ErrUnavailable, InstallHint("DIR"))
	}
	path, err := exec.LookPath(node)
	if err != nil {
		return fmt.Errorf("%s is %w: cannot find node (%v); install Debian's nodejs, or set RXEQ_NODE to a node binary", name, ErrUnavailable, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-e", probeScript, string(name))
	cmd.Env = append(os.Environ(), "RXEQ_TFJS_DIR="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return fmt.Errorf("%s is %w: cannot run %s (%v); install Debian's nodejs, or set RXEQ_NODE to a node binary", name, ErrUnavailable, path, err)
		}
		return fmt.Errorf("%s is %w: the TensorFlow.js %s packages are not installed in %s (%s); %s",
			name, ErrUnavailable, TFJSVersion, dir, lastErrorLine(stderr.String()), InstallHint(dir))
	}
	for _, v := range strings.Fields(stdout.String()) {
		if v != TFJSVersion {
			return fmt.Errorf("%s is %w: %s holds TensorFlow.js %s, want %s; %s", name, ErrUnavailable, dir, v, TFJSVersion, InstallHint(dir))
		}
	}
	return nil
}

// lastErrorLine is the line of node's stderr that names the error.
func lastErrorLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "Error") {
			return strings.TrimSpace(l)
		}
	}
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
