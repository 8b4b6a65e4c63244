package native

import (
	"context"
	"fmt"

	"github.com/rextio/rxeq/program/ir"
)

// CompileBatch is Compile for several programs at once, for a caller
// that builds many small programs (the fuzzer and its reducer): their
// translation units, each generated exactly as Compile generates it, are
// built by one compiler run into one shared library, which is loaded once
// (every member's Program holds its own dlopen reference, so members are
// closed independently).
//
// In the library, member i's functions are renamed rx_bI_<name> by a
// small wrapper file of #defines around its unchanged translation unit,
// so members with functions of the same name do not collide and
// Program.Source is still the C that Compile would build.
//
// progs[i] is nil and errs[i] says why when program i cannot be a member:
// in Forced mode, a function the backend does not support (Compile's
// error). A program whose functions are all unsupported in Auto mode is a
// member that runs on the fallback. When the library as a whole fails to
// build or load, err is that failure and no program is returned: a
// caller then compiles the programs singly with Compile, which says which
// one is at fault and with Compile's text. Options are those of Compile.
func CompileBatch(ctx context.Context, ps []*ir.Program, opts Options) (progs []*Program, errs []error, err error) {
	path, err := runtimePath(opts.Runtime)
	if err != nil {
		return nil, nil, err
	}
	type member struct {
		prog  *Program
		metas map[string]*funcMeta
		bad   []badFunc
	}
	members := make([]*member, len(ps))
	errs = make([]error, len(ps))
	var srcs [][]byte
	var renames []map[string]string
	var index []int // batch slot -> position in ps
	for i, p := range ps {
		if p == nil {
			errs[i] = fmt.Errorf("%w: nil program", ErrInternal)
			continue
		}
		src, metas, bad := generate(p)
		if opts.Mode == Forced && len(bad) > 0 {
			errs[i] = bad[0].Err
			continue
		}
		prog, err := newProgram(p, src, opts, path)
		if err != nil {
			return nil, nil, err
		}
		m := &member{prog: prog, metas: metas, bad: bad}
		members[i] = m
		if len(metas) == 0 {
			continue
		}
		r := map[string]string{}
		for _, meta := range metas {
			r[meta.CName] = batchSymbol(len(srcs), meta.CName)
		}
		srcs = append(srcs, src)
		renames = append(renames, r)
		index = append(index, i)
	}
	var lib string
	var cached bool
	var info BuildInfo
	if len(srcs) > 0 {
		if err := Available(); err != nil {
			return nil, nil, err // no compiler runs for code that could not be loaded
		}
		var probe Program
		probe.path = path
		tc, err := probe.toolchain(ctx, opts)
		if err != nil {
			return nil, nil, err
		}
		info = probe.info
		lib, cached, err = tc.Batch(ctx, srcs, renames)
		if err != nil {
			return nil, nil, err
		}
	}
	progs = make([]*Program, len(ps))
	slotOf := map[int]int{}
	for slot, i := range index {
		slotOf[i] = slot
	}
	closeAll := func() {
		for _, p := range progs {
			if p != nil {
				p.Close()
			}
		}
	}
	for i, m := range members {
		if m == nil {
			continue
		}
		p := m.prog
		if slot, ok := slotOf[i]; ok {
			l, err := loadLibrary(lib)
			if err != nil {
				closeAll()
				return nil, nil, err
			}
			p.lib, p.info = l, info
			p.info.Library, p.info.Cached = lib, cached
			if err := p.bind(m.metas, m.bad, func(meta *funcMeta) string { return batchSymbol(slot, meta.CName) }); err != nil {
				closeAll()
				return nil, nil, err
			}
		} else if err := p.bind(m.metas, m.bad, nil); err != nil {
			closeAll()
			return nil, nil, err
		}
		progs[i] = p
	}
	return progs, errs, nil
}

// batchSymbol is the name of C function cname of batch member slot.
func batchSymbol(slot int, cname string) string { return fmt.Sprintf("rx_b%d_%s", slot, cname) }
