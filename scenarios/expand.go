package scenarios

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Expand turns command-line paths into .rx file names: a file is kept as
// given; a directory is searched recursively for *.rx files, which follow
// in lexical order. A directory without any .rx file is an error.
func Expand(paths []string) ([]string, error) {
	var names []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			names = append(names, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".rx") {
				found = append(found, path)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no .rx files", p)
		}
		sort.Strings(found)
		names = append(names, found...)
	}
	return names, nil
}
