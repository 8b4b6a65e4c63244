package isolate

import (
	"fmt"

	"github.com/rextio/rxeq/program/ir"
)

// The IR crosses the pipe in a pointer-free form: values are listed once
// per function and referred to by ID, so the decoded program has the same
// sharing as the original (gob would copy every *Value it meets).

type wireProgram struct {
	File  string
	Funcs []wireFunc
}

type wireFunc struct {
	Name    string
	Pos     string
	Params  []int
	Results []int
	Values  []wireValue
	Body    []wireInstr
}

type wireValue struct {
	ID   int
	Name string
	Kind ir.ValueKind
	Type ir.Type
}

// Instruction tags.
const (
	tagOp uint8 = iota + 1
	tagFor
	tagIf
)

// wireInstr is one *ir.Op, *ir.For or *ir.If, by Tag. Value references are
// IDs; -1 is nil.
type wireInstr struct {
	Tag uint8

	// Op
	Kind     ir.OpKind
	Dst      int
	Args     []int
	Axis     int
	KeepDims bool
	F        float64
	I        int64
	Site     *ir.Site

	// For (Index, Count) and If (Cond)
	Index, Count, Cond int
	Pos                string
	Body, Else         []wireInstr // For: Body; If: Body is Then
}

func encodeProgram(p *ir.Program) (*wireProgram, error) {
	wp := &wireProgram{File: p.File}
	for _, f := range p.Funcs {
		wf, err := encodeFunc(f)
		if err != nil {
			return nil, fmt.Errorf("%w: encoding %s: %v", ErrWorker, f.Name, err)
		}
		wp.Funcs = append(wp.Funcs, wf)
	}
	return wp, nil
}

func encodeFunc(f *ir.Func) (wireFunc, error) {
	wf := wireFunc{Name: f.Name, Pos: f.Pos}
	for i, v := range f.Values {
		if v == nil || v.ID != i {
			return wf, fmt.Errorf("value %d has ID %v", i, v)
		}
		wf.Values = append(wf.Values, wireValue{ID: v.ID, Name: v.Name, Kind: v.Kind, Type: v.Type})
	}
	ref := func(v *ir.Value) (int, error) {
		if v == nil {
			return -1, nil
		}
		if v.ID < 0 || v.ID >= len(f.Values) || f.Values[v.ID] != v {
			return 0, fmt.Errorf("value %s is not in the function's value list", v.Ref())
		}
		return v.ID, nil
	}
	refs := func(vs []*ir.Value) ([]int, error) {
		out := make([]int, len(vs))
		for i, v := range vs {
			id, err := ref(v)
			if err != nil {
				return nil, err
			}
			out[i] = id
		}
		return out, nil
	}
	var err error
	if wf.Params, err = refs(f.Params); err != nil {
		return wf, err
	}
	if wf.Results, err = refs(f.Results); err != nil {
		return wf, err
	}
	var body func([]ir.Instr) ([]wireInstr, error)
	body = func(list []ir.Instr) ([]wireInstr, error) {
		out := make([]wireInstr, 0, len(list))
		for _, in := range list {
			var w wireInstr
			var err error
			switch in := in.(type) {
			case *ir.Op:
				w = wireInstr{Tag: tagOp, Kind: in.Kind, Axis: in.Axis, KeepDims: in.KeepDims, F: in.F, I: in.I, Site: in.Site}
				if w.Dst, err = ref(in.Dst); err == nil {
					w.Args, err = refs(in.Args)
				}
			case *ir.For:
				w = wireInstr{Tag: tagFor, Pos: in.Pos}
				if w.Index, err = ref(in.Index); err == nil {
					if w.Count, err = ref(in.Count); err == nil {
						w.Body, err = body(in.Body)
					}
				}
			case *ir.If:
				w = wireInstr{Tag: tagIf, Pos: in.Pos}
				if w.Cond, err = ref(in.Cond); err == nil {
					if w.Body, err = body(in.Then); err == nil {
						w.Else, err = body(in.Else)
					}
				}
			default:
				err = fmt.Errorf("unknown instruction %T", in)
			}
			if err != nil {
				return nil, err
			}
			out = append(out, w)
		}
		return out, nil
	}
	wf.Body, err = body(f.Body)
	return wf, err
}

func decodeProgram(wp *wireProgram) (*ir.Program, error) {
	p := &ir.Program{File: wp.File}
	for _, wf := range wp.Funcs {
		f, err := decodeFunc(wf)
		if err != nil {
			return nil, fmt.Errorf("%w: decoding %s: %v", ErrWorker, wf.Name, err)
		}
		p.Funcs = append(p.Funcs, f)
	}
	return p, nil
}

func decodeFunc(wf wireFunc) (*ir.Func, error) {
	f := &ir.Func{Name: wf.Name, Pos: wf.Pos, Values: make([]*ir.Value, len(wf.Values))}
	for i, wv := range wf.Values {
		if wv.ID != i {
			return nil, fmt.Errorf("value %d has ID %d", i, wv.ID)
		}
		f.Values[i] = &ir.Value{ID: wv.ID, Name: wv.Name, Kind: wv.Kind, Type: wv.Type}
	}
	bad := false
	ref := func(id int) *ir.Value {
		if id == -1 {
			return nil
		}
		if id < 0 || id >= len(f.Values) {
			bad = true
			return nil
		}
		return f.Values[id]
	}
	refs := func(ids []int) []*ir.Value {
		if ids == nil {
			return nil
		}
		out := make([]*ir.Value, len(ids))
		for i, id := range ids {
			out[i] = ref(id)
		}
		return out
	}
	f.Params, f.Results = refs(wf.Params), refs(wf.Results)
	var body func([]wireInstr) []ir.Instr
	body = func(list []wireInstr) []ir.Instr {
		if list == nil {
			return nil
		}
		out := make([]ir.Instr, 0, len(list))
		for _, w := range list {
			switch w.Tag {
			case tagOp:
				out = append(out, &ir.Op{Kind: w.Kind, Dst: ref(w.Dst), Args: refs(w.Args), Axis: w.Axis,
					KeepDims: w.KeepDims, F: w.F, I: w.I, Site: w.Site})
			case tagFor:
				out = append(out, &ir.For{Index: ref(w.Index), Count: ref(w.Count), Pos: w.Pos, Body: body(w.Body)})
			case tagIf:
				out = append(out, &ir.If{Cond: ref(w.Cond), Pos: w.Pos, Then: body(w.Body), Else: body(w.Else)})
			default:
				bad = true
			}
		}
		return out
	}
	f.Body = body(wf.Body)
	if bad {
		return nil, fmt.Errorf("malformed instruction or value reference")
	}
	return f, nil
}
