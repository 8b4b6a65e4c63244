package onnx_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rextio/rxeq/onnx"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/scenarios"
)

// FuzzImport: any bytes import or fail with ErrImport, never panic, and
// what imports is a program that checks as a scenario.
func FuzzImport(f *testing.F) {
	files, err := scenarios.Catalog()
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		p, err := program.Lower(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, fn := range file.Funcs {
			b, err := onnx.Export(p, fn.Name, onnx.Meta{Source: file.Name})
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	if b, err := os.ReadFile(filepath.Join("..", "cmd", "rxeq", "testdata", "linear.onnx")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		imp, err := onnx.Import(b, onnx.ImportOptions{})
		if err != nil {
			if !errors.Is(err, onnx.ErrImport) {
				t.Fatalf("error of the wrong kind: %v", err)
			}
			return
		}
		if _, err := program.ParseScenario("f.rx", imp.Source); err != nil {
			t.Fatalf("the program does not check: %v\n%s", err, imp.Source)
		}
	})
}
