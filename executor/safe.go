package executor

import (
	"context"
	"fmt"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
)

// SafePrepare calls e.Prepare, turning a panic into an error: an
// executor's bug fails its program, not the caller. The error wraps
// ErrExecutor and reads "NAME: panic while preparing: VALUE". A Prepare
// that returns neither a program nor an error fails the same way ("NAME:
// Prepare returned neither a program nor an error"), so a caller never
// holds a nil Prepared.
func SafePrepare(ctx context.Context, e Executor, f *program.File, p *ir.Program) (pp Prepared, err error) {
	defer func() {
		if v := recover(); v != nil {
			pp, err = nil, fmt.Errorf("%w: %s: panic while preparing: %v", ErrExecutor, e.Name(), v)
		}
	}()
	pp, err = e.Prepare(ctx, f, p)
	if err == nil && pp == nil {
		err = fmt.Errorf("%w: %s: Prepare returned neither a program nor an error", ErrExecutor, e.Name())
	}
	return pp, err
}
