package program

import (
	"errors"
	"fmt"
	"go/ast"
	"go/scanner"
	"go/token"
	"go/types"
	"io"
	"os"
	"strings"
	"syscall"
)

// Limits that keep checking a hostile file cheap. Checking is linear in the
// size of the file; these bound the size and the recursion depth.
const (
	// MaxFileSize is the largest .rx file Parse and ReadFile accept, in
	// bytes (1 MiB): the catalog's files are a few KiB.
	MaxFileSize = 1 << 20
	// MaxDepth is how deep expressions may nest (calls, parentheses and
	// unary operators inside one another, and the right operand of a
	// binary operator; a chain like a + b + c + … is flat, however long)
	// and, separately, how deep blocks may nest (for and if bodies; an
	// else-if chain is flat).
	MaxDepth = 256
	// maxExprText bounds the source text of an expression that an error
	// message or a runtime error site quotes; a longer one is cut with "…".
	maxExprText = 120
	// maxSyntaxNesting bounds, before parsing, how deep brackets ( [ {
	// nest and how many prefix operators come in a row. go/parser recurses
	// once per level, up to its own limit of 100,000 levels, which costs a
	// few hundred MB of stack; 16,384 levels cost a few tens of MB. A
	// valid program nests at most about 2*MaxDepth (blocks, then
	// parentheses), so anything between that and this limit parses and is
	// refused by the checker's nesting limit, with its clearer message.
	maxSyntaxNesting = 1 << 14
)

// Error kinds of ReadFile, told apart with errors.Is. They are refusals
// to read, not checker errors (those are an ErrorList of kind ErrInvalid).
var (
	// ErrNotRegular: the path is not a regular file (a device such as
	// /dev/zero, a FIFO, a socket or a directory), so it is not read.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is larger than MaxFileSize.
	ErrTooLarge = errors.New("file too large")
)

// ReadFile reads an .rx file for Parse. It refuses, without reading or
// blocking, a path that is not a regular file (opening follows symlinks,
// so a link to /dev/zero is refused too; the kind is that of the open
// descriptor), and reads at most MaxFileSize+1 bytes
// of the file, so a file that grows while it is read cannot make it read
// without end. A file larger than MaxFileSize is an ErrTooLarge error.
func ReadFile(name string) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO without a writer would block, and the
	// kind is checked on the open descriptor, so a file replaced after a
	// look at its name cannot slip through.
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil {
		return nil, err
	} else if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s): rxeq reads .rx source files only", name, ErrNotRegular, describeMode(info.Mode()))
	}
	src, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(src) > MaxFileSize {
		return nil, fmt.Errorf("%s: %w: more than %d bytes (1 MiB), the limit of an .rx file: split it into several files", name, ErrTooLarge, MaxFileSize)
	}
	return src, nil
}

// describeMode names the kind of a file that is not regular.
func describeMode(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}

// tooLarge is the error Parse returns for a source over MaxFileSize.
func tooLarge(filename string, n int) ErrorList {
	return ErrorList{{Pos: token.Position{Filename: filename, Line: 1, Column: 1},
		Msg: fmt.Sprintf("file is %d bytes, more than the limit of %d (1 MiB): split it into several .rx files", n, MaxFileSize)}}
}

// prescan reads the tokens of src, before it is parsed, for brackets nested
// or prefix operators chained beyond maxSyntaxNesting; it returns the
// error at the first such place, or nil. It is linear and allocates
// little, so a file built to make the parser recurse deep is refused
// cheaply. Malformed tokens are left to the parser to report.
func prescan(filename string, src []byte) ErrorList {
	fset := token.NewFileSet()
	file := fset.AddFile(filename, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	depth, run := 0, 0
	for {
		pos, tok, _ := s.Scan()
		switch tok {
		case token.EOF:
			return nil
		case token.LPAREN, token.LBRACK, token.LBRACE:
			if depth++; depth > maxSyntaxNesting {
				return ErrorList{{Pos: fset.Position(pos), Msg: fmt.Sprintf("brackets nest more than %d deep here (expressions and blocks may each nest at most %d deep): the file is not parsed", maxSyntaxNesting, MaxDepth)}}
			}
		case token.RPAREN, token.RBRACK, token.RBRACE:
			depth = max(depth-1, 0)
		}
		switch tok {
		case token.ADD, token.SUB, token.NOT, token.XOR, token.MUL, token.AND, token.ARROW, token.TILDE:
			if run++; run > maxSyntaxNesting {
				return ErrorList{{Pos: fset.Position(pos), Msg: fmt.Sprintf("more than %d operators in a row here (expressions may nest at most %d deep): the file is not parsed", maxSyntaxNesting, MaxDepth)}}
			}
		default:
			run = 0
		}
	}
}

// checkDepth reports every place in a function body where expressions or
// blocks nest deeper than MaxDepth, and says whether there was none. The
// body is not type-checked when there was: its errors would be about a
// program nobody can read anyway, and skipping it keeps the cost linear.
func (c *checker) checkDepth(body *ast.BlockStmt) bool {
	ok := true
	var (
		exprDepth, blockDepth int
		stack                 []uint8 // what entering each open node counted: 0 nothing, 1 a block, 2 an expression
		flat                  ast.Node
		// One error per outermost expression and per outermost block: its
		// too-deep siblings are the same problem.
		exprReported, blockReported bool
	)
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			switch stack[len(stack)-1] {
			case 1:
				blockDepth--
				blockReported = blockReported && blockDepth > 0
			case 2:
				exprDepth--
				exprReported = exprReported && exprDepth > 0
			}
			stack = stack[:len(stack)-1]
			return true
		}
		var kind uint8
		switch n := n.(type) {
		case *ast.BlockStmt:
			if n != body {
				kind, blockDepth = 1, blockDepth+1
				if blockDepth > MaxDepth {
					if !blockReported {
						c.errorf(n.Lbrace, "blocks nest more than %d deep here (for and if bodies inside one another): the limit is %d; flatten the control flow", MaxDepth, MaxDepth)
					}
					blockDepth--
					ok, blockReported = false, true
					return false
				}
			}
		case ast.Expr:
			if n != flat { // the left operand of a binary operator does not nest
				kind, exprDepth = 2, exprDepth+1
				if exprDepth > MaxDepth {
					if !exprReported {
						c.errorf(n.Pos(), "expression nests more than %d deep here (calls, parentheses and operators inside one another): the limit is %d; assign inner parts to variables first", MaxDepth, MaxDepth)
					}
					exprDepth--
					ok, exprReported = false, true
					return false
				}
			}
			if b, isBin := n.(*ast.BinaryExpr); isBin {
				flat = b.X // ast.Inspect visits X right after b
			}
		}
		stack = append(stack, kind)
		return true
	})
	return ok
}

// exprString prints an expression as source text (types.ExprString), or,
// for an expression longer than maxExprText in the source, its first
// maxExprText bytes of source with white space collapsed and "…" after: the
// cost of a message stays bounded whatever the expression's size, so
// checking stays linear in the size of the file.
func (c *checker) exprString(e ast.Expr) string {
	start, end := e.Pos(), e.End()
	tf := c.fset.File(start)
	if tf == nil || c.src == nil || !end.IsValid() || c.fset.File(end) != tf {
		return types.ExprString(e)
	}
	so, eo := tf.Offset(start), tf.Offset(end)
	if eo-so <= maxExprText || eo > len(c.src) {
		return types.ExprString(e)
	}
	return strings.Join(strings.Fields(string(c.src[so:so+maxExprText])), " ") + " …"
}
