package main

import (
	"fmt"
	"io"
	"os"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/scenarios"
)

// loadPrograms parses the given .rx files and directories (searched
// recursively for *.rx, in lexical order), or the built-in catalog when
// paths is empty. Every file is checked and every error printed; ok is
// false when any file does not check, or when two files carry one
// scenario name (scenarios.Unique).
//
// With scenario, files are checked as scenarios (see parseFile).
func loadPrograms(paths []string, scenario bool, stderr io.Writer) (files []*program.File, ok bool) {
	if len(paths) == 0 {
		cat, err := scenarios.Catalog()
		if err != nil {
			fmt.Fprintf(stderr, "rxeq: built-in catalog: %v\n", err)
			return nil, false
		}
		return cat, true
	}
	ok = true
	var onDisk []string
	for _, p := range paths {
		// A catalog scenario by the name `rxeq list` shows (or its file
		// name), when no such file exists.
		if _, err := os.Stat(p); err != nil {
			if f, lerr := scenarios.Lookup(p); lerr == nil {
				files = append(files, f)
				continue
			}
		}
		onDisk = append(onDisk, p)
	}
	if len(onDisk) == 0 {
		return files, ok
	}
	names, err := scenarios.Expand(onDisk)
	if err != nil {
		fmt.Fprintf(stderr, "rxeq: %v\n", err)
		return nil, false
	}
	for _, name := range names {
		f, good := parseFile(name, scenario, stderr)
		if !good {
			ok = false
			continue
		}
		files = append(files, f)
	}
	if err := scenarios.Unique(files); err != nil {
		fmt.Fprintf(stderr, "rxeq: %v\n", err)
		return nil, false
	}
	return files, ok
}
