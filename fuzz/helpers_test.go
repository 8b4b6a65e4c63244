package fuzz_test

import (
	"context"
	"errors"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// skewed wraps the fallback interpreter and misbehaves on the functions
// that trigger says so: it adds delta to every float output, or fails
// with err, or panics.
type skewed struct {
	name    executor.Name
	trigger func(fn *program.Func) bool
	delta   float32
	err     error
	panics  bool
}

func (s skewed) Name() executor.Name { return s.name }

func (s skewed) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	inner, err := fallback.Executor{}.Prepare(ctx, f, p)
	if err != nil {
		return nil, err
	}
	return skewedPrepared{s: s, f: f, inner: inner}, nil
}

type skewedPrepared struct {
	s     skewed
	f     *program.File
	inner executor.Prepared
}

func (p skewedPrepared) Run(ctx context.Context, fn string, in map[string]*tensor.Tensor) (executor.Outcome, error) {
	out, err := p.inner.Run(ctx, fn, in)
	if p.s.trigger != nil && !p.s.trigger(p.f.Func(fn)) {
		return out, err
	}
	switch {
	case p.s.panics:
		panic("skewed executor")
	case p.s.err != nil:
		return executor.Outcome{}, p.s.err
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
	executor.Executor
	prepared int
}

func (c *counting) Name() executor.Name { return "counting" }

func (c *counting) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	c.prepared++
	return c.Executor.Prepare(ctx, f, p)
}

// offsetOracle is the oracle with delta added to every float output.
type offsetOracle struct{ delta float64 }

func (offsetOracle) Name() executor.Name { return "oracle" }

func (o offsetOracle) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	inner, err := oracle.Executor{}.Prepare(ctx, f, p)
	return offsetPrepared{o.delta, inner}, err
}

type offsetPrepared struct {
	delta float64
	inner executor.Prepared
}

func (p offsetPrepared) Run(ctx context.Context, fn string, in map[string]*tensor.Tensor) (executor.Outcome, error) {
	out, err := p.inner.Run(ctx, fn, in)
	for _, t := range out.Outputs {
		for i := range t.F64 {
			t.F64[i] += p.delta
		}
	}
	return out, err
}

func (p offsetPrepared) Close() error { return p.inner.Close() }

// constant is the fallback with every element of float output out set
// to v.
type constant struct {
	name, out string
	v         float32
}

func (c constant) Name() executor.Name { return executor.Name(c.name) }

func (c constant) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	inner, err := fallback.Executor{}.Prepare(ctx, f, p)
	return constantPrepared{c.out, c.v, inner}, err
}

type constantPrepared struct {
	out   string
	v     float32
	inner executor.Prepared
}

func (p constantPrepared) Run(ctx context.Context, fn string, in map[string]*tensor.Tensor) (executor.Outcome, error) {
	out, err := p.inner.Run(ctx, fn, in)
	if t := out.Outputs[p.out]; t != nil {
		for i := range t.F32 {
			t.F32[i] = p.v
		}
	}
	return out, err
}

func (p constantPrepared) Close() error { return p.inner.Close() }

// reshaped is the fallback with output drop removed from every run and
// output add (a copy of the first declared one) added.
type reshaped struct{ drop, add string }

func (reshaped) Name() executor.Name { return "reshaped" }

func (r reshaped) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	inner, err := fallback.Executor{}.Prepare(ctx, f, p)
	return reshapedPrepared{r, f, inner}, err
}

type reshapedPrepared struct {
	r     reshaped
	f     *program.File
	inner executor.Prepared
}

func (p reshapedPrepared) Run(ctx context.Context, fn string, in map[string]*tensor.Tensor) (executor.Outcome, error) {
	out, err := p.inner.Run(ctx, fn, in)
	if err != nil {
		return out, err
	}
	if p.r.add != "" {
		out.Outputs[p.r.add] = out.Outputs[p.f.Func(fn).Results[0].Name].Clone()
	}
	delete(out.Outputs, p.r.drop)
	return out, nil
}

func (p reshapedPrepared) Close() error { return p.inner.Close() }
