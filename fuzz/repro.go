package fuzz

import (
	"errors"
)

// ErrNoRepro is the kind of the error TorchRepro returns for a program it
// cannot translate.
var ErrNoRepro = errors.New("no standalone reproducer for this program")

// TorchRepro returns a standalone C++ reproducer over libtorch of a
// reduced program.
func TorchRepro(reduced []byte, rec *Record) ([]byte, error) {
	return nil, ErrNoRepro
}
