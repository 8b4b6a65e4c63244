package executor

import "context"

// caseKey is the context key of the case a Run serves.
type caseKey struct{}

// WithCase returns a copy of ctx that names the case a Prepared.Run call
// serves ("scenario/function/bBATCH/executor"). The runner passes every
// Run such a context, so that an executor can say in its messages which
// case held a shared resource (see ErrNotRun).
func WithCase(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, caseKey{}, name)
}

// CaseFrom returns the case name WithCase stored in ctx, or "".
func CaseFrom(ctx context.Context) string {
	name, _ := ctx.Value(caseKey{}).(string)
	return name
}
