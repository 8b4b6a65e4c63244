package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/scenarios"
)

// loadPrograms parses the given .rx files and directories (searched
// recursively for *.rx, in lexical order), or the built-in catalog when
// paths is empty. Every file is checked and every error printed; ok is
// false when any file does not check.
func loadPrograms(paths []string, stderr io.Writer) (files []*program.File, ok bool) {
	if len(paths) == 0 {
		cat, err := scenarios.Catalog()
		if err != nil {
			fmt.Fprintf(stderr, "rxeq: built-in catalog: %v\n", err)
			return nil, false
		}
		return cat, true
	}
	var names []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			fmt.Fprintf(stderr, "rxeq: %v\n", err)
			return nil, false
		}
		if !info.IsDir() {
			names = append(names, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".rx") {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			fmt.Fprintf(stderr, "rxeq: %v\n", err)
			return nil, false
		}
		if len(found) == 0 {
			fmt.Fprintf(stderr, "rxeq: %s: no .rx files\n", p)
			return nil, false
		}
		sort.Strings(found)
		names = append(names, found...)
	}
	ok = true
	for _, name := range names {
		f, good := parseFile(name, stderr)
		if !good {
			ok = false
			continue
		}
		files = append(files, f)
	}
	return files, ok
}
