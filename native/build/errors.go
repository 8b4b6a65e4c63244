package build

import "errors"

// Error kinds of building. Package native re-exports them under the same
// names (native.ErrCompiler is ErrCompiler), so errors.Is holds whichever
// package a caller names.
var (
	// ErrCompiler: the C compiler is missing or failed. The message names
	// CC, and for a failed compile carries its stderr and the path of the
	// generated file.
	ErrCompiler = errors.New("native build")
	// ErrCache: the build cache cannot be used (unsafe permissions, not
	// owned by the current user, unwritable).
	ErrCache = errors.New("native build cache")
)
