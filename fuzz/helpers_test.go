package fuzz_test

import (
	"context"
	"errors"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// skewed wraps the fallback interpreter and misbehaves on the functions
// that trigger says so: it adds delta to every float output, or fails
// with err, or panics.
type skewed struct {
	name    string
	trigger func(fn *program.Func) bool
	delta   float32
	err     error
	panics  bool
}

func (s skewed) Name() string { return s.name }

func (s skewed) Prepare(ctx context.Context, f *program.File, p *ir.Program) (harness.Prepared, error) {
	inner, err := harness.FallbackExecutor{}.Prepare(ctx, f, p)
	if err != nil {
		return nil, err
	}
	return skewedPrepared{s: s, f: f, inner: inner}, nil
}

type skewedPrepared struct {
	s     skewed
	f     *program.File
	inner harness.Prepared
}

func (p skewedPrepared) Run(ctx context.Context, fn string, in map[string]*tensor.Tensor) (harness.Outcome, error) {
	out, err := p.inner.Run(ctx, fn, in)
	if p.s.trigger != nil && !p.s.trigger(p.f.Func(fn)) {
		return out, err
	}
	switch {
	case p.s.panics:
		panic("skewed executor")
	case p.s.err != nil:
		return harness.Outcome{}, p.s.err
	case err != nil:
		return out, err
	}
	for _, t := range out.Outputs {
		for i := range t.F32 {
			t.F32[i] += p.s.delta
		}
	}
	return out, nil
}

func (p skewedPrepared) Close() error { return p.inner.Close() }

// hasTanhOfRank2 reports whether fn calls Tanh on a rank-2 argument.
func hasTanhOfRank2(fn *program.Func) bool {
	found := false
	var expr func(e program.Expr)
	expr = func(e program.Expr) {
		switch e := e.(type) {
		case *program.Call:
			if e.Builtin == program.Tanh && e.Args[0].Type().Rank() == 2 {
				found = true
			}
			for _, a := range e.Args {
				expr(a)
			}
		case *program.Binary:
			expr(e.X)
			expr(e.Y)
		case *program.Unary:
			expr(e.X)
		}
	}
	var stmts func([]program.Stmt)
	stmts = func(body []program.Stmt) {
		for _, s := range body {
			switch s := s.(type) {
			case *program.Assign:
				expr(s.Value)
			case *program.For:
				stmts(s.Body)
			case *program.If:
				expr(s.Cond)
				stmts(s.Then)
				stmts(s.Else)
			case *program.Return:
				for _, v := range s.Values {
					expr(v)
				}
			}
		}
	}
	stmts(fn.Body)
	return found
}

// fileHasTanhOfRank2 is the reducer's synthetic predicate.
func fileHasTanhOfRank2(src []byte) bool {
	f, err := program.Parse("p.rx", src)
	if err != nil {
		return false
	}
	for _, fn := range f.Funcs {
		if hasTanhOfRank2(fn) {
			return true
		}
	}
	return false
}

var errSkewed = errors.New("skewed failure")

// counting is an executor that counts its preparations.
type counting struct {
	harness.Executor
	prepared int
}

func (c *counting) Name() string { return "counting" }

func (c *counting) Prepare(ctx context.Context, f *program.File, p *ir.Program) (harness.Prepared, error) {
	c.prepared++
	return c.Executor.Prepare(ctx, f, p)
}
