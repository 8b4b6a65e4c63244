package cgen

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/program/ir"
)

// The generated C, by example. For
//
//	func score(x [B][F]float32, ...) (logits [B][C]float32, ...) {
//		for round_idx := range 4 { if CheckedRem(round_idx, 2) == 0 { ... } else { ... } }
//
// Generate emits (abridged):
//
//	/* score: scoring.rx:12:1 */
//	int rx_fn_score(const rx_arg *rx_args, rx_status *rx_st)
//	{
//		...declarations: one rx_val slot pointer per tensor, one local per scalar...
//		RX_TRY(rx_open(&rx_c, rx_args, rx_st, rx_v, 9, rx_types, 3, 3, 1));
//		RX_TRY(rx_check_input(&rx_c, 0, x));
//		...
//		RX_TRY(rx_bind_output(&rx_c, 0, logits));
//		...
//
//		while (rx_tile(&rx_c)) {
//			RX_TRY(rx_matmul(&rx_c, rx_t7, x, w));
//			for (int64_t round_idx = 0; round_idx < 4; round_idx++) {
//				RX_TRY(rx_checked_rem(&rx_c, 0, round_idx, 2, &rx_t9));
//				rx_t10 = rx_t9 == 0;
//				if (rx_t10) {
//					...
//				} else {
//					...
//				}
//			}
//		}
//	rx_done:
//		return rx_close(&rx_c);
//	}
//
// The prologue (rx_open, one rx_check_input per parameter, one
// rx_bind_output per result) runs once per call; the body runs inside
// `while (rx_tile(&rx_c)) {`, once, or once per row tile when the caller
// runs a large batch in tiles (native/tile.go), in the same context.
//
// The exact forms the source lock relies on:
//   - function: `int <CFuncName(fn)>(const rx_arg *rx_args, rx_status *rx_st)`,
//     preceded by the comment `/* <fn>: <file:line:col> */`;
//   - loop: `for (int64_t <index> = 0; <index> < <count>; <index>++) {` where
//     <index> is the mangled index name (rx_i<ID> for `for range N`) and
//     <count> is the decimal literal when the count is an integer constant,
//     else the mangled name of the count (a parameter or value written
//     once), else rx_n<ID>, a copy taken just before the loop;
//   - branch: `if (<cond>) {`, with `} else {` when there is an else branch,
//     where <cond> is the C name of the condition value;
//   - an op on tensors: `RX_TRY(rx_<op>(&rx_c, <dst>, <args>...));`, e.g.
//     rx_matmul, rx_add, rx_tanh, rx_softmax(.., axis), rx_sum(.., axis, keep);
//   - a fused MatMul (findFusions): `RX_TRY(rx_matmul_bt(&rx_c, <dst>, a, w, t));`
//     for `t = Transpose(w); dst = MatMul(a, t)`, `RX_TRY(rx_matmul_bias(&rx_c,
//     <dst>, a, b, bias, m));` for `m = MatMul(a, b); dst = m + bias`, and
//     rx_matmul_bt_bias(&rx_c, <dst>, a, w, bias, t, m) for both, and the
//     _tanh forms (with s = m + bias) for a Tanh of the sum, in place of the
//     ops' own statements;
//   - a fused elementwise pair: `RX_TRY(rx_ew2(&rx_c, <dst>, a, b, RX_EW_SUB, c,
//     RX_EW_DIV, t));` for `t = a - b; dst = t / c`, and `RX_TRY(rx_ew_const(&rx_c,
//     <dst>, a, RX_EW_MUL, 0.5f, t));` for `t = 0.5; dst = a * t` (findFusions);
//   - a tensor copy: `RX_TRY(rx_copy(&rx_c, <dst>, <src>));`, or
//     `RX_TRY(rx_move(&rx_c, <dst>, <src>));` when <src> is a temporary
//     written by the statement just before and read by nothing else (the
//     destination takes over its buffer, e.g. `logits = Tanh(logits)`);
//   - integer scalar ops: `<dst> = rx_iadd(a, b);` (wrapping), comparisons
//     `<dst> = a == b;`, checked ones `RX_TRY(rx_checked_rem(&rx_c, <site>, a, b, &<dst>));`.
//
// Tensor values are named by their mangled source name (temps rx_t<ID>); an
// int64 scalar parameter's slot is rx_in_<name> and its value the mangled
// name; an int64 scalar result's slot is rx_out_<name>.

// FuncABI is the calling convention of one generated function: what the
// loader and the call bridge (package native) need to know to call it,
// validate its arguments, size its outputs and report its errors, without
// looking at the C. Its slices and maps belong to the generator's result
// and must not be modified.
type FuncABI struct {
	// Func is the IR function the C function computes.
	Func *ir.Func
	// CName is the C name of the generated function (CFuncName).
	CName string
	// Params are the function's parameters in ir.BindInputs's order: the
	// order of the rx_arg array's inputs, before the results.
	Params []ir.ParamSpec
	// Syms are the symbolic dimensions in binding order (first appearance
	// in the parameters, dims left to right): symbol k is -(k+1) in a
	// dimension spec and index k of rx_status's symbol bindings.
	Syms []string
	// Sites are the CheckedDiv/CheckedRem sites by the index the C passes
	// in its status.
	Sites []*ir.Site
	// SlotOf is the rx_val slot index of every value that lives in one
	// (every tensor, parameter and result), as reported in a status.
	SlotOf map[*ir.Value]int
	// Results are the function's results, in the order of the rx_arg
	// array's outputs.
	Results []*ir.Value
	// ParamDims and OutDims are every parameter's and result's dims as
	// dimension specs (>= 0 a size, -(k+1) symbol k), so that a call sizes
	// its outputs without maps.
	ParamDims [][]int
	OutDims   [][]int
	// OutRanks is the sum of the results' ranks.
	OutRanks int
}

// Unsupported is a function Translate left out of the translation unit,
// and why: an error wrapping ErrUnsupported that names the function and
// the op, dtype or rank.
type Unsupported struct {
	Func string
	Err  error
}

// Unit is a generated translation unit: its C source and the ABI of every
// function in it, by IR function name, and the functions left out.
type Unit struct {
	// Source is the C translation unit (deterministic: the same program
	// gives the same bytes).
	Source []byte
	// Funcs is the ABI of every generated function, by IR name.
	Funcs map[string]*FuncABI
	// Unsupported are the functions the backend cannot compile, in
	// program order.
	Unsupported []Unsupported
}

// Generate returns the C translation unit for p: deterministic (the same
// program gives the same bytes), one C function per scoring function in
// program order. Anything the backend cannot compile is an error wrapping
// ErrUnsupported that names the function and the op, dtype or rank.
func Generate(p *ir.Program) ([]byte, error) {
	u := Translate(p)
	if len(u.Unsupported) > 0 {
		return nil, u.Unsupported[0].Err
	}
	return u.Source, nil
}

// Translate emits every supported function of p, in program order, and
// returns the unit with each function's ABI. Unsupported functions are
// left out of the source and listed in Unit.Unsupported; the source is
// then the one Generate would give for p without them.
func Translate(p *ir.Program) *Unit {
	var b bytes.Buffer
	fmt.Fprintf(&b, "/* Generated by rxeq from %s. DO NOT EDIT.\n", commentText(p.File))
	b.WriteString(" * One C function per scoring function, in source order; the invocation\n")
	b.WriteString(" * context and the kernels are in the runtime library it is linked against. */\n")
	b.WriteString("#include \"rx_runtime.h\"\n")
	u := &Unit{Funcs: map[string]*FuncABI{}}
	for _, f := range p.Funcs {
		syms, err := checkFunc(f)
		if err != nil {
			u.Unsupported = append(u.Unsupported, Unsupported{f.Name, err})
			continue
		}
		g := newGenFunc(f, syms)
		b.WriteString("\n")
		g.emit(&b)
		u.Funcs[f.Name] = g.abi()
	}
	u.Source = b.Bytes()
	return u
}

type genFunc struct {
	f        *ir.Func
	syms     []string
	symIdx   map[string]int
	name     map[*ir.Value]string // C name of every used value
	slot     map[*ir.Value]int    // slot index of tensor values
	slotName map[*ir.Value]string // C name of the slot pointer
	slots    []*ir.Value
	scalars  []*ir.Value         // scalar locals to declare at the top
	constI   map[*ir.Value]int64 // ConstI temps, inlined as literals
	counts   map[*ir.For]string  // loop count expressions
	countTmp map[*ir.For]string  // loop counts copied before the loop
	indexes  map[*ir.For]string
	sites    []*ir.Site
	siteIdx  map[*ir.Op]int
	moves    map[*ir.Op]bool    // tensor copies emitted as rx_move
	fused    map[*ir.Op]*fusion // the first op of each fused group
	inFused  map[*ir.Op]bool    // the other ops of the groups, emitted by the first
}

// isSlot reports whether v lives in a runtime slot: every tensor (float32
// of any rank, int64 of rank > 0) and every parameter and result.
func isSlot(v *ir.Value) bool {
	return v.Kind == ir.Param || v.Kind == ir.Result || v.Type.DType == ir.Float32 || v.Type.Rank() > 0
}

func newGenFunc(f *ir.Func, syms []string) *genFunc {
	g := &genFunc{f: f, syms: syms, symIdx: map[string]int{}, name: map[*ir.Value]string{},
		slot: map[*ir.Value]int{}, slotName: map[*ir.Value]string{}, constI: map[*ir.Value]int64{},
		counts: map[*ir.For]string{}, countTmp: map[*ir.For]string{}, indexes: map[*ir.For]string{},
		siteIdx: map[*ir.Op]int{}, moves: map[*ir.Op]bool{}, fused: map[*ir.Op]*fusion{}, inFused: map[*ir.Op]bool{}}
	for i, s := range syms {
		g.symIdx[s] = i
	}
	used := map[*ir.Value]bool{}
	writes := map[*ir.Value]int{}
	reads := map[*ir.Value]int{}
	for _, v := range f.Params {
		used[v] = true
	}
	for _, v := range f.Results {
		used[v] = true
	}
	ir.Walk(f.Body, func(in ir.Instr) {
		switch in := in.(type) {
		case *ir.Op:
			used[in.Dst] = true
			writes[in.Dst]++
			for _, a := range in.Args {
				used[a] = true
				reads[a]++
			}
			if in.Kind == ir.ConstI && in.Dst.Kind == ir.Temp {
				g.constI[in.Dst] = in.I
			}
			if in.Site != nil {
				g.siteIdx[in] = len(g.sites)
				g.sites = append(g.sites, in.Site)
			}
		case *ir.For:
			used[in.Count] = true
			reads[in.Count]++
			if in.Index != nil {
				used[in.Index] = true
			}
		case *ir.If:
			used[in.Cond] = true
			reads[in.Cond]++
		}
	})
	g.findMoves(f.Body, reads)
	g.findFusions(f.Body, reads)
	// Names, in value order, so that they are deterministic.
	taken := map[string]bool{}
	for _, v := range f.Values {
		if !used[v] {
			continue
		}
		var n string
		switch {
		case v.Name == "":
			n = "rx_t" + strconv.Itoa(v.ID)
		case !taken[Mangle(v.Name)]:
			n = Mangle(v.Name)
		default:
			n = "rx_s" + strconv.Itoa(v.ID) + "_" + encodeIdent(v.Name)
		}
		taken[n] = true
		g.name[v] = n
		if isSlot(v) {
			g.slot[v] = len(g.slots)
			g.slots = append(g.slots, v)
			g.slotName[v] = n
			if v.Type.IsIntScalar() {
				if v.Kind == ir.Param {
					g.slotName[v] = "rx_in_" + encodeIdent(v.Name)
				} else {
					g.slotName[v] = "rx_out_" + encodeIdent(v.Name)
				}
			}
		}
		if _, isConst := g.constI[v]; !isConst && !isTensor(v) && v.Kind != ir.LoopIndex {
			g.scalars = append(g.scalars, v)
		}
	}
	// ConstI values written more than once are ordinary locals.
	for v := range g.constI {
		if writes[v] != 1 {
			delete(g.constI, v)
			g.scalars = append(g.scalars, v)
		}
	}
	// Loops: index names and count expressions.
	ir.Walk(f.Body, func(in ir.Instr) {
		fo, ok := in.(*ir.For)
		if !ok {
			return
		}
		if fo.Index != nil {
			g.indexes[fo] = g.name[fo.Index]
		} else {
			g.indexes[fo] = "rx_i" + strconv.Itoa(fo.Count.ID) + "_" + strconv.Itoa(len(g.indexes))
		}
		switch {
		case g.isConstI(fo.Count):
			g.counts[fo] = intLit(g.constI[fo.Count])
		case fo.Count.Kind == ir.Param || (fo.Count.Kind == ir.Temp && writes[fo.Count] <= 1):
			g.counts[fo] = g.name[fo.Count]
		default:
			t := "rx_n" + strconv.Itoa(len(g.countTmp))
			g.countTmp[fo] = t
			g.counts[fo] = t
		}
	})
	sortValues(g.scalars)
	return g
}

// findMoves marks the tensor copies that can be moves: `var = copy tmp`
// right after the op that writes tmp (in the same block, so every run of
// the copy follows a fresh write), where the copy is the only read of tmp
// in the function. The destination then takes over tmp's buffer; nothing
// can read tmp's old value afterwards.
func (g *genFunc) findMoves(body []ir.Instr, reads map[*ir.Value]int) {
	for i, in := range body {
		switch in := in.(type) {
		case *ir.Op:
			if in.Kind != ir.Copy || i == 0 || len(in.Args) != 1 {
				continue
			}
			src := in.Args[0]
			prev, ok := body[i-1].(*ir.Op)
			if ok && prev.Dst == src && src.Kind == ir.Temp && src != in.Dst && reads[src] == 1 &&
				isTensor(src) && isTensor(in.Dst) {
				g.moves[in] = true
			}
		case *ir.For:
			g.findMoves(in.Body, reads)
		case *ir.If:
			g.findMoves(in.Then, reads)
			g.findMoves(in.Else, reads)
		}
	}
}

// fusion is a group of adjacent ops emitted as one fused call
// (rx_runtime.h): an optional Transpose of the MatMul's right operand, the
// MatMul, an optional Add of a bias row to its product, and an optional
// Tanh of that sum; or two elementwise ops.
type fusion struct {
	tr, mm, add, tanh *ir.Op
	ew1, ew2          *ir.Op // or a pair of elementwise ops (rx_ew2)
	cst               *ir.Op // or a constant and the op using it (with ew2; rx_ew_const)
}

// ewCodes are the elementwise ops rx_ew2 fuses, by their rx_runtime.h codes.
var ewCodes = map[ir.OpKind]string{ir.Add: "RX_EW_ADD", ir.Sub: "RX_EW_SUB", ir.Mul: "RX_EW_MUL", ir.Div: "RX_EW_DIV"}

// findFusions groups the ops that one fused entry point computes, each
// group in one block and adjacent, so that nothing runs between its ops:
//   - `t = Transpose(w); m = MatMul(a, t)` → rx_matmul_bt(d = m, a, w, t);
//   - `m = MatMul(a, b); s = Add(m, bias)` → rx_matmul_bias(d = s, a, b,
//     bias, m), where bias is a rank-1 float32 value whose size is m's
//     column count (the bias row; the Add then has m's shape);
//   - both → rx_matmul_bt_bias(d = s, a, w, bias, t, m);
//   - either bias form followed by `u = Tanh(s)` → rx_matmul_bias_tanh(d =
//     u, a, b, bias, m, s) or rx_matmul_bt_bias_tanh(d = u, a, w, bias, t,
//     m, s);
//   - `t = op1(a, b); d = op2(t, c)` with op1, op2 among Add, Sub, Mul, Div
//     and a, t, d of one type (b and c broadcast into it) → rx_ew2(d, a, b,
//     RX_EW_op1, c, RX_EW_op2, t);
//   - `t = ConstF k; d = op(a, t)` with op among Add, Sub, Mul, Div and a,
//     d of one type → rx_ew_const(d, a, RX_EW_op, k, t).
//
// Only temporaries read by nothing but the next op of the group (t by the
// MatMul as its right operand, by op2 as its left one or by op as its
// right one, m by the Add as its left one, s by the Tanh) are skipped; their slots are still passed,
// so that the runtime validates their checked types and the counters stay
// those of the unfused ops. The fused kernels
// give the same bits as the ops one by one (the same summation order, the
// product rounded before the bias is added, m + bias in that order, Tanh's
// own kernel on the rounded sums).
func (g *genFunc) findFusions(body []ir.Instr, reads map[*ir.Value]int) {
	op := func(i int) *ir.Op {
		if i >= len(body) {
			return nil
		}
		o, _ := body[i].(*ir.Op)
		return o
	}
	onlyRead := func(v *ir.Value) bool { return v.Kind == ir.Temp && reads[v] == 1 }
	for i := 0; i < len(body); i++ {
		switch in := body[i].(type) {
		case *ir.For:
			g.findFusions(in.Body, reads)
			continue
		case *ir.If:
			g.findFusions(in.Then, reads)
			g.findFusions(in.Else, reads)
			continue
		}
		if k, e := op(i), op(i+1); k != nil && e != nil && k.Kind == ir.ConstF && onlyRead(k.Dst) &&
			ewCodes[e.Kind] != "" && len(e.Args) == 2 && e.Args[1] == k.Dst && e.Args[0] != k.Dst &&
			e.Args[0].Type.DType == ir.Float32 && e.Dst.Type.Equal(e.Args[0].Type) {
			g.fused[k] = &fusion{cst: k, ew2: e}
			g.inFused[e] = true
			i++
			continue
		}
		if e1, e2 := op(i), op(i+1); e1 != nil && e2 != nil && ewCodes[e1.Kind] != "" && ewCodes[e2.Kind] != "" &&
			len(e1.Args) == 2 && len(e2.Args) == 2 && e2.Args[0] == e1.Dst && e2.Args[1] != e1.Dst &&
			onlyRead(e1.Dst) && e1.Args[0].Type.Equal(e1.Dst.Type) && e2.Dst.Type.Equal(e1.Dst.Type) &&
			e1.Dst.Type.DType == ir.Float32 {
			g.fused[e1] = &fusion{ew1: e1, ew2: e2}
			g.inFused[e2] = true
			i++
			continue
		}
		fu := &fusion{}
		j := i
		if o := op(j); o != nil && o.Kind == ir.Transpose {
			mm := op(j + 1)
			if mm == nil || mm.Kind != ir.MatMul || len(mm.Args) != 2 || mm.Args[1] != o.Dst ||
				mm.Args[0] == o.Dst || !onlyRead(o.Dst) {
				continue
			}
			fu.tr = o
			j++
		}
		mm := op(j)
		if mm == nil || mm.Kind != ir.MatMul || len(mm.Args) != 2 {
			continue
		}
		fu.mm = mm
		if add := op(j + 1); add != nil && add.Kind == ir.Add && len(add.Args) == 2 && add.Args[0] == mm.Dst &&
			onlyRead(mm.Dst) && isBiasRow(add.Args[1], mm.Dst.Type) && add.Dst.Type.Equal(mm.Dst.Type) {
			fu.add = add
			j++
			if th := op(j + 1); th != nil && th.Kind == ir.Tanh && len(th.Args) == 1 && th.Args[0] == add.Dst &&
				onlyRead(add.Dst) {
				fu.tanh = th
				j++
			}
		}
		if fu.tr == nil && fu.add == nil {
			continue
		}
		g.fused[op(i)] = fu
		for k := i + 1; k <= j; k++ {
			g.inFused[op(k)] = true
		}
		i = j
	}
}

// isBiasRow reports whether v is a bias row for a product of type m (rank
// 2): rank-1 float32 of m's column count.
func isBiasRow(v *ir.Value, m ir.Type) bool {
	return v.Type.DType == ir.Float32 && v.Type.Rank() == 1 && m.Rank() == 2 && v.Type.Shape[0] == m.Shape[1]
}

// fusedCall returns the C statement of a fused group.
func (g *genFunc) fusedCall(fu *fusion) string {
	if fu.cst != nil {
		return fmt.Sprintf("RX_TRY(rx_ew_const(&rx_c, %s, %s, %s, %s, %s));", g.slotName[fu.ew2.Dst],
			g.slotName[fu.ew2.Args[0]], ewCodes[fu.ew2.Kind], floatLit(fu.cst.F), g.slotName[fu.cst.Dst])
	}
	if fu.ew1 != nil {
		return fmt.Sprintf("RX_TRY(rx_ew2(&rx_c, %s, %s, %s, %s, %s, %s, %s));", g.slotName[fu.ew2.Dst],
			g.slotName[fu.ew1.Args[0]], g.slotName[fu.ew1.Args[1]], ewCodes[fu.ew1.Kind], g.slotName[fu.ew2.Args[1]],
			ewCodes[fu.ew2.Kind], g.slotName[fu.ew1.Dst])
	}
	a, b := g.slotName[fu.mm.Args[0]], g.slotName[fu.mm.Args[1]]
	switch {
	case fu.tr != nil && fu.tanh != nil:
		return fmt.Sprintf("RX_TRY(rx_matmul_bt_bias_tanh(&rx_c, %s, %s, %s, %s, %s, %s, %s));", g.slotName[fu.tanh.Dst], a,
			g.slotName[fu.tr.Args[0]], g.slotName[fu.add.Args[1]], g.slotName[fu.tr.Dst], g.slotName[fu.mm.Dst],
			g.slotName[fu.add.Dst])
	case fu.tanh != nil:
		return fmt.Sprintf("RX_TRY(rx_matmul_bias_tanh(&rx_c, %s, %s, %s, %s, %s, %s));", g.slotName[fu.tanh.Dst], a, b,
			g.slotName[fu.add.Args[1]], g.slotName[fu.mm.Dst], g.slotName[fu.add.Dst])
	case fu.tr != nil && fu.add != nil:
		return fmt.Sprintf("RX_TRY(rx_matmul_bt_bias(&rx_c, %s, %s, %s, %s, %s, %s));", g.slotName[fu.add.Dst], a,
			g.slotName[fu.tr.Args[0]], g.slotName[fu.add.Args[1]], g.slotName[fu.tr.Dst], g.slotName[fu.mm.Dst])
	case fu.tr != nil:
		return fmt.Sprintf("RX_TRY(rx_matmul_bt(&rx_c, %s, %s, %s, %s));", g.slotName[fu.mm.Dst], a,
			g.slotName[fu.tr.Args[0]], g.slotName[fu.tr.Dst])
	default:
		return fmt.Sprintf("RX_TRY(rx_matmul_bias(&rx_c, %s, %s, %s, %s, %s));", g.slotName[fu.add.Dst], a, b,
			g.slotName[fu.add.Args[1]], g.slotName[fu.mm.Dst])
	}
}

// isTensor reports whether v is handled as a tensor (through its slot) in
// the body: float32 values and int64 values of rank > 0.
func isTensor(v *ir.Value) bool { return v.Type.DType == ir.Float32 || v.Type.Rank() > 0 }

func (g *genFunc) isConstI(v *ir.Value) bool { _, ok := g.constI[v]; return ok }

func sortValues(vs []*ir.Value) {
	for i := 1; i < len(vs); i++ {
		for j := i; j > 0 && vs[j].ID < vs[j-1].ID; j-- {
			vs[j], vs[j-1] = vs[j-1], vs[j]
		}
	}
}

// abi returns the generated function's ABI.
func (g *genFunc) abi() *FuncABI {
	m := &FuncABI{Func: g.f, CName: CFuncName(g.f.Name), Params: g.f.ParamList(), Syms: g.syms,
		Sites: g.sites, SlotOf: g.slot, Results: g.f.Results}
	specs := func(t ir.Type) []int {
		out := make([]int, len(t.Shape))
		for i, d := range t.Shape {
			out[i] = int(d.Size)
			if d.IsSym() {
				out[i] = -(g.symIdx[d.Sym] + 1)
			}
		}
		return out
	}
	for _, p := range g.f.Params {
		m.ParamDims = append(m.ParamDims, specs(p.Type))
	}
	for _, r := range g.f.Results {
		m.OutDims = append(m.OutDims, specs(r.Type))
		m.OutRanks += r.Type.Rank()
	}
	return m
}

func (g *genFunc) dimSpec(d ir.Dim) string {
	if d.IsSym() {
		return strconv.Itoa(-(g.symIdx[d.Sym] + 1))
	}
	return strconv.FormatInt(d.Size, 10)
}

func dtypeC(d ir.DType) string {
	if d == ir.Int64 {
		return "RX_I64"
	}
	return "RX_F32"
}

func (g *genFunc) emit(b *bytes.Buffer) {
	f := g.f
	fmt.Fprintf(b, "/* %s: %s */\n", commentText(f.Name), commentText(f.Pos))
	fmt.Fprintf(b, "int %s(const rx_arg *rx_args, rx_status *rx_st)\n{\n", CFuncName(f.Name))
	n := len(g.slots)
	arr := n
	if arr == 0 {
		arr = 1
	}
	// The checked type of every slot; symbolic dims are negative (-(k+1)).
	fmt.Fprintf(b, "\tstatic const rx_type rx_types[%d] = {\n", arr)
	if n == 0 {
		b.WriteString("\t\t{RX_F32, 0, {0, 0, 0, 0}},\n")
	}
	for _, v := range g.slots {
		dims := make([]string, MaxRank)
		for i := range dims {
			dims[i] = "0"
		}
		for i, d := range v.Type.Shape {
			dims[i] = g.dimSpec(d)
		}
		fmt.Fprintf(b, "\t\t{%s, %d, {%s}}, /* %s %s */\n", dtypeC(v.Type.DType), v.Type.Rank(),
			strings.Join(dims, ", "), g.slotName[v], commentText(v.Type.String()))
	}
	b.WriteString("\t};\n")
	fmt.Fprintf(b, "\trx_ctx rx_c;\n\trx_val rx_v[%d];\n", arr)
	for _, v := range g.slots {
		fmt.Fprintf(b, "\trx_val *const %s = &rx_v[%d];\n", g.slotName[v], g.slot[v])
	}
	for _, v := range g.scalars {
		ty := "int64_t"
		if v.Type.DType == ir.Bool {
			ty = "bool"
		}
		fmt.Fprintf(b, "\t%s %s RX_UNUSED = 0;\n", ty, g.name[v])
	}
	for i := range len(g.countTmp) {
		fmt.Fprintf(b, "\tint64_t rx_n%d RX_UNUSED = 0;\n", i)
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "\tRX_TRY(rx_open(&rx_c, rx_args, rx_st, rx_v, %d, rx_types, %d, %d, %d));\n",
		n, len(f.Params), len(f.Results), len(g.syms))
	for i, p := range f.Params {
		fmt.Fprintf(b, "\tRX_TRY(rx_check_input(&rx_c, %d, %s));\n", i, g.slotName[p])
	}
	for i, r := range f.Results {
		fmt.Fprintf(b, "\tRX_TRY(rx_bind_output(&rx_c, %d, %s));\n", i, g.slotName[r])
	}
	// The body runs once, or once per row tile of a large batch, inside
	// this one context (rx_tile).
	b.WriteString("\n\twhile (rx_tile(&rx_c)) {\n")
	for _, p := range f.Params {
		if p.Type.IsIntScalar() {
			fmt.Fprintf(b, "\t\t%s = rx_scalar_i64(%s);\n", g.name[p], g.slotName[p])
		}
	}
	g.body(b, f.Body, 2)
	for _, r := range f.Results {
		if r.Type.IsIntScalar() {
			fmt.Fprintf(b, "\t\tRX_TRY(rx_store_i64(&rx_c, %s, %s));\n", g.slotName[r], g.name[r])
		}
	}
	b.WriteString("\t}\nrx_done:\n\treturn rx_close(&rx_c);\n}\n")
}

// ref returns the C expression of a scalar operand.
func (g *genFunc) ref(v *ir.Value) string {
	if g.isConstI(v) {
		return intLit(g.constI[v])
	}
	return g.name[v]
}

func (g *genFunc) body(b *bytes.Buffer, body []ir.Instr, depth int) {
	ind := strings.Repeat("\t", depth)
	for _, in := range body {
		switch in := in.(type) {
		case *ir.Op:
			if s := g.op(in); s != "" {
				b.WriteString(ind + s + "\n")
			}
		case *ir.For:
			if t, ok := g.countTmp[in]; ok {
				fmt.Fprintf(b, "%s%s = %s;\n", ind, t, g.ref(in.Count))
			}
			i := g.indexes[in]
			fmt.Fprintf(b, "%sfor (int64_t %s = 0; %s < %s; %s++) {\n", ind, i, i, g.counts[in], i)
			g.body(b, in.Body, depth+1)
			b.WriteString(ind + "}\n")
		case *ir.If:
			fmt.Fprintf(b, "%sif (%s) {\n", ind, g.ref(in.Cond))
			g.body(b, in.Then, depth+1)
			if len(in.Else) > 0 {
				b.WriteString(ind + "} else {\n")
				g.body(b, in.Else, depth+1)
			}
			b.WriteString(ind + "}\n")
		}
	}
}

var tensorOps = map[ir.OpKind]string{
	ir.Add: "rx_add", ir.Sub: "rx_sub", ir.Mul: "rx_mul", ir.Div: "rx_div", ir.Maximum: "rx_maximum", ir.Minimum: "rx_minimum",
	ir.Neg: "rx_neg", ir.Tanh: "rx_tanh", ir.Exp: "rx_exp", ir.Log: "rx_log", ir.Sigmoid: "rx_sigmoid", ir.Relu: "rx_relu",
	ir.Abs: "rx_abs", ir.Sqrt: "rx_sqrt", ir.MatMul: "rx_matmul", ir.Transpose: "rx_transpose",
}

var cmpOps = map[ir.OpKind]string{ir.Eq: "==", ir.Ne: "!=", ir.Lt: "<", ir.Le: "<=", ir.Gt: ">", ir.Ge: ">="}

// op returns the C statement for one op ("" for an inlined constant or an
// op that a fused call before it computes).
func (g *genFunc) op(o *ir.Op) string {
	if fu := g.fused[o]; fu != nil {
		return g.fusedCall(fu)
	}
	if g.inFused[o] {
		return ""
	}
	d := o.Dst
	slots := func() string {
		parts := []string{"&rx_c", g.slotName[d]}
		for _, a := range o.Args {
			parts = append(parts, g.slotName[a])
		}
		return strings.Join(parts, ", ")
	}
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	switch o.Kind {
	case ir.ConstF:
		return fmt.Sprintf("RX_TRY(rx_const_f(&rx_c, %s, %s));", g.slotName[d], floatLit(o.F))
	case ir.ConstI:
		if g.isConstI(d) {
			return ""
		}
		return fmt.Sprintf("%s = %s;", g.name[d], intLit(o.I))
	case ir.Copy:
		if g.moves[o] {
			return fmt.Sprintf("RX_TRY(rx_move(%s));", slots())
		}
		if isTensor(d) {
			return fmt.Sprintf("RX_TRY(rx_copy(%s));", slots())
		}
		return fmt.Sprintf("%s = %s;", g.name[d], g.ref(o.Args[0]))
	case ir.Softmax:
		return fmt.Sprintf("RX_TRY(rx_softmax(%s, %d));", slots(), o.Axis)
	case ir.LogSoftmax:
		return fmt.Sprintf("RX_TRY(rx_logsoftmax(%s, %d));", slots(), o.Axis)
	case ir.Argmax:
		if d.Type.IsIntScalar() { // Argmax of a rank-1 tensor: a scalar, not a slot
			return fmt.Sprintf("RX_TRY(rx_argmax_scalar(&rx_c, %s, %d, &%s));", g.slotName[o.Args[0]], o.Axis, g.name[d])
		}
		if o.KeepDims {
			return fmt.Sprintf("RX_TRY(rx_argmax_keep(%s, %d));", slots(), o.Axis)
		}
		return fmt.Sprintf("RX_TRY(rx_argmax(%s, %d));", slots(), o.Axis)
	case ir.Sum, ir.Mean, ir.Max:
		return fmt.Sprintf("RX_TRY(rx_%s(%s, %d, %d));", o.Kind, slots(), o.Axis, b(o.KeepDims))
	case ir.IAdd, ir.ISub, ir.IMul:
		return fmt.Sprintf("%s = rx_%s(%s, %s);", g.name[d], o.Kind, g.ref(o.Args[0]), g.ref(o.Args[1]))
	case ir.INeg:
		return fmt.Sprintf("%s = rx_ineg(%s);", g.name[d], g.ref(o.Args[0]))
	case ir.CheckedDiv, ir.CheckedRem:
		fn := "rx_checked_div"
		if o.Kind == ir.CheckedRem {
			fn = "rx_checked_rem"
		}
		return fmt.Sprintf("RX_TRY(%s(&rx_c, %d, %s, %s, &%s));", fn, g.siteIdx[o], g.ref(o.Args[0]), g.ref(o.Args[1]), g.name[d])
	case ir.Eq, ir.Ne, ir.Lt, ir.Le, ir.Gt, ir.Ge:
		x, y := g.ref(o.Args[0]), g.ref(o.Args[1])
		if x == y {
			// `i > i` is a -Werror=tautological-compare error in C; on
			// int64 its value is known: true for ==, <=, >=, false otherwise.
			return fmt.Sprintf("%s = %d; /* %s %s %s */", g.name[d], b(o.Kind == ir.Eq || o.Kind == ir.Le || o.Kind == ir.Ge), x, cmpOps[o.Kind], y)
		}
		return fmt.Sprintf("%s = %s %s %s;", g.name[d], x, cmpOps[o.Kind], y)
	case ir.Not:
		return fmt.Sprintf("%s = !%s;", g.name[d], g.ref(o.Args[0]))
	}
	return fmt.Sprintf("RX_TRY(%s(%s));", tensorOps[o.Kind], slots())
}
