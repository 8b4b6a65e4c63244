package ort

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
)

// TelemetryEnv is the environment variable that turns ONNX Runtime's
// telemetry off on Linux when it is set to 1 before the library
// initializes (microsoft/onnxruntime#27379).
const TelemetryEnv = "ORT_DISABLE_TELEMETRY"

// ErrUnavailable is wrapped by the error of Open when the library cannot
// be used here: it is missing, it is not ONNX Runtime, it is too old for
// APIVersion, or rxeq was built without cgo.
var ErrUnavailable = errors.New("ONNX Runtime unavailable")

// ErrClosed is returned by Run on a closed session.
var ErrClosed = errors.New("ort: session closed")

// ErrorCode is ONNX Runtime's OrtErrorCode.
type ErrorCode int

// The OrtErrorCode values.
const (
	ErrOK ErrorCode = iota
	ErrFail
	ErrInvalidArgument
	ErrNoSuchFile
	ErrNoModel
	ErrEngineError
	ErrRuntimeException
	ErrInvalidProtobuf
	ErrModelLoaded
	ErrNotImplemented
	ErrInvalidGraph
	ErrEPFail
)

var codeNames = []string{"ORT_OK", "ORT_FAIL", "ORT_INVALID_ARGUMENT", "ORT_NO_SUCHFILE", "ORT_NO_MODEL",
	"ORT_ENGINE_ERROR", "ORT_RUNTIME_EXCEPTION", "ORT_INVALID_PROTOBUF", "ORT_MODEL_LOADED",
	"ORT_NOT_IMPLEMENTED", "ORT_INVALID_GRAPH", "ORT_EP_FAIL"}

func (c ErrorCode) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("OrtErrorCode(%d)", int(c))
}

// Error is a failed ONNX Runtime call: the OrtStatus's code and message.
// Every error of this package that comes from ONNX Runtime wraps one;
// match it with errors.As.
type Error struct {
	Code    ErrorCode
	Message string
}

func (e *Error) Error() string { return "onnxruntime: " + e.Code.String() + ": " + e.Message }

// Level is a graph optimization level (GraphOptimizationLevel).
type Level int

// The levels rxeq's executors use: Optimize is ONNX Runtime's default
// (ORT_ENABLE_ALL), NoOptimize disables every graph optimization
// (ORT_DISABLE_ALL).
const (
	Optimize Level = iota
	NoOptimize
)

func (l Level) ort() int {
	if l == NoOptimize {
		return 0 // ORT_DISABLE_ALL
	}
	return 99 // ORT_ENABLE_ALL
}

// String is the level's name in reports: "all" or "none".
func (l Level) String() string {
	if l == NoOptimize {
		return "none (ORT_DISABLE_ALL)"
	}
	return "all (ORT_ENABLE_ALL)"
}

// SessionOptions are the settings of a session that rxeq varies; the rest
// are fixed (one intra-op and one inter-op thread, sequential execution,
// no spinning, warnings and worse logged to SetLogger's function).
type SessionOptions struct {
	Level Level
}

// Severity is an OrtLoggingLevel.
type Severity int

// The severities.
const (
	SeverityVerbose Severity = iota
	SeverityInfo
	SeverityWarning
	SeverityError
	SeverityFatal
)

var logger atomic.Pointer[func(Severity, string, string)]

// SetLogger routes ONNX Runtime's log messages (warnings and worse, with
// their category) to f; nil, the default, drops them. ONNX Runtime never
// writes to stderr itself: its environment is created with a logger of
// rxeq's. f is called from ONNX Runtime's threads and must be quick.
func SetLogger(f func(sev Severity, category, message string)) {
	if f == nil {
		logger.Store(nil)
		return
	}
	logger.Store(&f)
}

// The library rxeq is tested with, and where ci/setup.sh puts it.
const (
	// Version is the ONNX Runtime version whose library ci/setup.sh
	// installs and whose differences docs/onnx.md lists.
	Version = "1.30.0"
	// LibraryName is the library's file name.
	LibraryName = "libonnxruntime.so.1"
	// minVersion is the first release that serves APIVersion.
	minVersion = "1.17"
)

// DefaultLibrary returns where ci/setup.sh puts the library:
// os.UserCacheDir()/rxeq/ort/VERSION/libonnxruntime.so.1 (on Linux
// $XDG_CACHE_HOME or ~/.cache). The environment variable RXEQ_ORT_LIB,
// read by the command (builtin.Config.FromEnv), overrides it.
func DefaultLibrary() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "rxeq", "ort", Version, LibraryName)
}

// InstallHint is how to obtain the library, for the reason an executor is
// unavailable.
const InstallHint = "run ci/setup.sh, or: npm pack onnxruntime-node@" + Version + " --pack-destination DIR && " +
	"tar -xzf DIR/onnxruntime-node-" + Version + ".tgz -C DIR package/bin/napi-v6/linux/x64/" + LibraryName +
	" and set RXEQ_ORT_LIB to DIR/package/bin/napi-v6/linux/x64/" + LibraryName

// Find opens the library at path ("" for DefaultLibrary) and checks that
// it is ONNX Runtime Version (another release may compute differently
// from what docs/onnx.md records). Its error wraps ErrUnavailable and says
// how to install the library.
func Find(path string) (*Library, error) {
	if path == "" {
		path = DefaultLibrary()
	}
	if path == "" {
		return nil, fmt.Errorf("%w: no user cache directory to look in, and RXEQ_ORT_LIB is not set (%s)", ErrUnavailable, InstallHint)
	}
	if !withCgo {
		return nil, fmt.Errorf("%w: rxeq was built without cgo", ErrUnavailable)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: no ONNX Runtime library at %s (%s)", ErrUnavailable, path, InstallHint)
	}
	l, err := Open(path)
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return nil, fmt.Errorf("%w (%s)", err, InstallHint)
		}
		return nil, err
	}
	if l.Version() != Version {
		return nil, fmt.Errorf("%w: %s is ONNX Runtime %s, want %s (%s)", ErrUnavailable, path, l.Version(), Version, InstallHint)
	}
	return l, nil
}
