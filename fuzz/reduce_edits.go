package fuzz

import (
	"go/ast"
	"go/token"
	"strconv"
)

// passFunc lists the edits of one kind on file (and its directives h),
// each a closure that applies itself to that file.
type passFunc func(file *ast.File, h *header) []func()

// passes are tried in order, biggest cuts first. Batches are dropped
// first of all: every later candidate then runs at the batches that still
// fail alone (one, mostly) instead of at the program's two or three.
var passes = []passFunc{dropBatches, dropFuncs, dropResults, deleteStmts, unwrapStmts, dropParams, loopCounts, simplifyExprs, shrinkDims, dropConsts, shrinkBatches}

func funcDecls(file *ast.File) []*ast.FuncDecl {
	var out []*ast.FuncDecl
	for _, d := range file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			out = append(out, fd)
		}
	}
	return out
}

func removeDecl(file *ast.File, d ast.Decl) {
	for i, x := range file.Decls {
		if x == d {
			file.Decls = append(file.Decls[:i:i], file.Decls[i+1:]...)
			return
		}
	}
}

func dropFuncs(file *ast.File, _ *header) []func() {
	fds := funcDecls(file)
	if len(fds) < 2 {
		return nil
	}
	var out []func()
	for _, fd := range fds {
		out = append(out, func() { removeDecl(file, fd) })
	}
	return out
}

// eachList calls visit with every statement list of every function body,
// nested blocks included; top is true for a function's own body.
func eachList(file *ast.File, visit func(list *[]ast.Stmt, top bool)) {
	var block func(b *ast.BlockStmt, top bool)
	var stmt func(s ast.Stmt)
	block = func(b *ast.BlockStmt, top bool) {
		if b == nil {
			return
		}
		visit(&b.List, top)
		for _, s := range b.List {
			stmt(s)
		}
	}
	stmt = func(s ast.Stmt) {
		switch s := s.(type) {
		case *ast.RangeStmt:
			block(s.Body, false)
		case *ast.ForStmt:
			block(s.Body, false)
		case *ast.IfStmt:
			block(s.Body, false)
			switch e := s.Else.(type) {
			case *ast.BlockStmt:
				block(e, false)
			case *ast.IfStmt:
				stmt(e)
			}
		case *ast.BlockStmt:
			block(s, false)
		}
	}
	for _, fd := range funcDecls(file) {
		block(fd.Body, true)
	}
}

func splice(list *[]ast.Stmt, i int, with []ast.Stmt) {
	l := *list
	out := append(append(append([]ast.Stmt(nil), l[:i]...), with...), l[i+1:]...)
	*list = out
}

func deleteStmts(file *ast.File, _ *header) []func() {
	var out []func()
	eachList(file, func(list *[]ast.Stmt, top bool) {
		for i := range *list {
			if top && i == len(*list)-1 {
				continue // the final return
			}
			out = append(out, func() { splice(list, i, nil) })
		}
	})
	return out
}

// unwrapStmts replaces an if by one of its branches (or drops its else)
// and a for by its body run once with index 0.
func unwrapStmts(file *ast.File, _ *header) []func() {
	var out []func()
	eachList(file, func(list *[]ast.Stmt, _ bool) {
		for i, s := range *list {
			switch s := s.(type) {
			case *ast.RangeStmt:
				out = append(out, func() {
					body := s.Body.List
					if id, ok := s.Key.(*ast.Ident); ok {
						replaceIdent(body, id.Name, &ast.BasicLit{Kind: token.INT, Value: "0"})
					}
					splice(list, i, body)
				})
			case *ast.IfStmt:
				out = append(out, func() { splice(list, i, s.Body.List) })
				switch e := s.Else.(type) {
				case *ast.BlockStmt:
					out = append(out, func() { splice(list, i, e.List) })
				case *ast.IfStmt:
					out = append(out, func() { splice(list, i, []ast.Stmt{e}) })
				}
				if s.Else != nil {
					out = append(out, func() { s.Else = nil })
				}
			}
		}
	})
	return out
}

// replaceIdent replaces every use of name in stmts with lit.
func replaceIdent(stmts []ast.Stmt, name string, lit ast.Expr) {
	for _, s := range stmts {
		for _, slot := range exprSlots(s) {
			if id, ok := (*slot).(*ast.Ident); ok && id.Name == name {
				*slot = lit
			}
		}
	}
}

// exprSlots returns a pointer to every expression inside s (nested
// statements and sub-expressions included), outermost first.
func exprSlots(s ast.Stmt) []*ast.Expr {
	var out []*ast.Expr
	var stmt func(s ast.Stmt)
	stmt = func(s ast.Stmt) {
		out = append(out, ownSlots(s)...)
		switch s := s.(type) {
		case *ast.IfStmt:
			for _, b := range s.Body.List {
				stmt(b)
			}
			if s.Else != nil {
				stmt(s.Else)
			}
		case *ast.RangeStmt:
			for _, b := range s.Body.List {
				stmt(b)
			}
		case *ast.BlockStmt:
			for _, b := range s.List {
				stmt(b)
			}
		}
	}
	stmt(s)
	return out
}

// ownSlots returns the expression slots of s itself, not of the
// statements nested in it.
func ownSlots(s ast.Stmt) []*ast.Expr {
	var out []*ast.Expr
	var expr func(p *ast.Expr)
	expr = func(p *ast.Expr) {
		out = append(out, p)
		switch e := (*p).(type) {
		case *ast.BinaryExpr:
			expr(&e.X)
			expr(&e.Y)
		case *ast.UnaryExpr:
			expr(&e.X)
		case *ast.ParenExpr:
			expr(&e.X)
		case *ast.CallExpr:
			for i := range e.Args {
				expr(&e.Args[i])
			}
		}
	}
	switch s := s.(type) {
	case *ast.AssignStmt:
		for i := range s.Rhs {
			expr(&s.Rhs[i])
		}
	case *ast.ReturnStmt:
		for i := range s.Results {
			expr(&s.Results[i])
		}
	case *ast.IfStmt:
		expr(&s.Cond)
	case *ast.RangeStmt:
		expr(&s.X)
	}
	return out
}

// fieldNames flattens a field list into (field, name) pairs.
func fieldNames(fl *ast.FieldList) [][2]int {
	var out [][2]int
	if fl == nil {
		return nil
	}
	for i, f := range fl.List {
		for j := range f.Names {
			out = append(out, [2]int{i, j})
		}
	}
	return out
}

func removeName(fl *ast.FieldList, at [2]int) {
	f := fl.List[at[0]]
	f.Names = append(f.Names[:at[1]:at[1]], f.Names[at[1]+1:]...)
	if len(f.Names) == 0 {
		fl.List = append(fl.List[:at[0]:at[0]], fl.List[at[0]+1:]...)
	}
}

// dropResults removes a result, the statements that assign it and its
// value in a return.
func dropResults(file *ast.File, _ *header) []func() {
	var out []func()
	for _, fd := range funcDecls(file) {
		names := fieldNames(fd.Type.Results)
		if len(names) < 2 {
			continue
		}
		for idx, at := range names {
			name := fd.Type.Results.List[at[0]].Names[at[1]].Name
			out = append(out, func() {
				removeName(fd.Type.Results, at)
				eachList(file, func(list *[]ast.Stmt, _ bool) {
					kept := (*list)[:0:0]
					for _, s := range *list {
						if as, ok := s.(*ast.AssignStmt); ok && len(as.Lhs) == 1 {
							if id, ok := as.Lhs[0].(*ast.Ident); ok && id.Name == name && as.Tok != token.DEFINE {
								continue
							}
						}
						if r, ok := s.(*ast.ReturnStmt); ok && len(r.Results) == len(names) {
							r.Results = append(r.Results[:idx:idx], r.Results[idx+1:]...)
						}
						kept = append(kept, s)
					}
					*list = kept
				})
			})
		}
	}
	return out
}

func dropParams(file *ast.File, _ *header) []func() {
	var out []func()
	for _, fd := range funcDecls(file) {
		for _, at := range fieldNames(fd.Type.Params) {
			out = append(out, func() { removeName(fd.Type.Params, at) })
		}
	}
	return out
}

func intValue(e ast.Expr) (int64, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.INT {
		return 0, false
	}
	v, err := strconv.ParseInt(lit.Value, 0, 64)
	return v, err == nil
}

func intLitExpr(v int64) ast.Expr {
	return &ast.BasicLit{Kind: token.INT, Value: strconv.FormatInt(v, 10)}
}

// smaller returns smaller positive values to try for v: 1 and v/2.
func smaller(v int64) []int64 {
	var out []int64
	if v > 1 {
		out = append(out, 1)
	}
	if v > 3 {
		out = append(out, v/2)
	}
	return out
}

// loopCounts lowers a loop count to 1 or to half.
func loopCounts(file *ast.File, _ *header) []func() {
	var out []func()
	eachList(file, func(list *[]ast.Stmt, _ bool) {
		for _, s := range *list {
			rs, ok := s.(*ast.RangeStmt)
			if !ok {
				continue
			}
			v, isLit := intValue(rs.X)
			if !isLit {
				out = append(out, func() { rs.X = intLitExpr(1) })
				continue
			}
			for _, w := range smaller(v) {
				out = append(out, func() { rs.X = intLitExpr(w) })
			}
		}
	})
	return out
}

// simplifyExprs replaces an expression by one of its operands, drops a
// keepdims argument, or replaces it by 0 or 1.
func simplifyExprs(file *ast.File, _ *header) []func() {
	var out []func()
	eachList(file, func(list *[]ast.Stmt, _ bool) {
		for _, s := range *list {
			switch s.(type) {
			case *ast.AssignStmt, *ast.ReturnStmt, *ast.IfStmt, *ast.RangeStmt:
			default:
				continue
			}
			for _, slot := range ownSlots(s) {
				e := *slot
				var subs []ast.Expr
				switch e := e.(type) {
				case *ast.BinaryExpr:
					subs = append(subs, e.X, e.Y)
				case *ast.UnaryExpr:
					subs = append(subs, e.X)
				case *ast.ParenExpr:
					subs = append(subs, e.X)
				case *ast.CallExpr:
					subs = append(subs, e.Args...)
					if len(e.Args) == 3 {
						out = append(out, func() { e.Args = e.Args[:2] })
					}
				}
				for _, sub := range subs {
					out = append(out, func() { *slot = sub })
				}
				if _, isLit := e.(*ast.BasicLit); !isLit {
					if _, isIdent := e.(*ast.Ident); !isIdent {
						out = append(out, func() { *slot = intLitExpr(1) }, func() { *slot = intLitExpr(0) })
					}
				}
			}
		}
	})
	return out
}

// shrinkDims makes constants and literal dimensions smaller.
func shrinkDims(file *ast.File, _ *header) []func() {
	var out []func()
	for _, d := range file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, val := range vs.Values {
				if v, ok := intValue(val); ok {
					for _, w := range smaller(v) {
						out = append(out, func() { vs.Values[i] = intLitExpr(w) })
					}
				}
			}
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		if at, ok := n.(*ast.ArrayType); ok {
			if v, ok := intValue(at.Len); ok {
				for _, w := range smaller(v) {
					out = append(out, func() { at.Len = intLitExpr(w) })
				}
			}
		}
		return true
	})
	return out
}

// dropConsts removes constants nothing refers to (a dimension named by a
// removed constant would silently become a symbolic one).
func dropConsts(file *ast.File, _ *header) []func() {
	uses := map[string]int{}
	ast.Inspect(file, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			uses[id.Name]++
		}
		return true
	})
	var out []func()
	for _, d := range file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		used := false
		for _, spec := range gd.Specs {
			for _, n := range spec.(*ast.ValueSpec).Names {
				used = used || uses[n.Name] > 1
			}
		}
		if !used {
			out = append(out, func() { removeDecl(file, gd) })
		}
	}
	return out
}

// dropBatches drops batches, one at a time.
func dropBatches(_ *ast.File, h *header) []func() {
	var out []func()
	if len(h.batches) > 1 {
		for i := range h.batches {
			out = append(out, func() { h.batches = append(h.batches[:i:i], h.batches[i+1:]...) })
		}
	}
	return out
}

// shrinkBatches drops batches and makes them smaller.
func shrinkBatches(f *ast.File, h *header) []func() {
	out := dropBatches(f, h)
	for i, b := range h.batches {
		for _, w := range smaller(int64(b)) {
			out = append(out, func() { h.batches[i] = int(w) })
		}
	}
	return out
}
