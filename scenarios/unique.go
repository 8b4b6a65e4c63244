package scenarios

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rextio/rxeq/program"
)

// ErrDuplicate is wrapped by Unique's error.
var ErrDuplicate = errors.New("duplicate scenario name")

// Unique returns an error wrapping ErrDuplicate when two of files carry
// one scenario name (File.ScenarioName: the //rx:scenario directive, or
// the file's base name). The name is what cases, JUnit test cases and
// report rows are called by, so two files under one name would give rows
// nobody can tell apart. The error has one line per name, each naming
// every file that carries it.
func Unique(files []*program.File) error {
	byName := map[string][]string{}
	var order []string
	for _, f := range files {
		n := f.ScenarioName()
		if _, seen := byName[n]; !seen {
			order = append(order, n)
		}
		byName[n] = append(byName[n], f.Name)
	}
	var lines []string
	for _, n := range order {
		names := byName[n]
		if len(names) < 2 {
			continue
		}
		how := "declared by " + strings.Join(names, " and ")
		if allSame(names) {
			how = fmt.Sprintf("%s is given %d times", names[0], len(names))
		}
		lines = append(lines, fmt.Sprintf("scenario %q: %s; cases and reports are named by the scenario, so each name must be unique "+
			"(give each file its own //rx:scenario NAME)", n, how))
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrDuplicate, strings.Join(lines, "\n"))
}

func allSame(names []string) bool {
	for _, n := range names[1:] {
		if n != names[0] {
			return false
		}
	}
	return true
}
