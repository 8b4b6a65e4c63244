package program

import (
	"errors"
	"go/token"
	"sort"
	"strings"
)

// ErrInvalid is the kind of every error Parse returns: the file is not a
// valid .rx program. errors.Is(err, ErrInvalid) holds for an ErrorList.
var ErrInvalid = errors.New("invalid program")

// Error is one problem in a program, at a position.
type Error struct {
	Pos token.Position
	Msg string
}

// Error prints "file:line:col: message".
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// ErrorList is every independent error found in a file, sorted by position.
type ErrorList []*Error

// Error prints one error per line.
func (l ErrorList) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (l ErrorList) Unwrap() error { return ErrInvalid }

func (l ErrorList) sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}
