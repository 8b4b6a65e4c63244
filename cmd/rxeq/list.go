package main

import (
	"context"
	"fmt"
	"go/ast"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/lock"
	"github.com/rextio/rxeq/native"
	"github.com/rextio/rxeq/program"
)

// cmdList prints one line per scenario function: its batches and locks.
func cmdList(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("list", "[PATH...]", stdout, stderr)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	files, ok := loadPrograms(fs.Args(), true, stderr)
	if !ok {
		return exitUsage
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tFUNCTION\tBATCHES\tLOCKS\tFILE")
	for _, f := range files {
		batches := make([]string, len(f.Batches))
		for i, b := range f.Batches {
			batches[i] = fmt.Sprint(b)
		}
		if len(batches) == 0 {
			batches = []string{fmt.Sprint(harness.DefaultBatch)}
		}
		for _, fn := range f.Funcs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", f.ScenarioName(), fn.Name, strings.Join(batches, " "), len(fn.Locks), f.Name)
		}
	}
	_ = tw.Flush()
	return exitOK
}

// cmdLock runs the source-lock checks only: generate C, check each
// function's locks, print every failure. No compiler is needed.
func cmdLock(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("lock", "[--update [--func F]] [PATH...]", stdout, stderr)
	update := fs.Bool("update", false, "rewrite each function's //rx:lock lines from the C generated now (as LLVM's update_test_checks), instead of checking them")
	only := fs.String("func", "", "with --update, rewrite only function `F`'s lock lines")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *update && fs.NArg() == 0 {
		fmt.Fprintln(stderr, "rxeq lock --update: name the .rx files to rewrite")
		return exitUsage
	}
	files, ok := loadPrograms(fs.Args(), false, stderr)
	if !ok {
		return exitUsage
	}
	if *update {
		return updateLocks(files, *only, stdout, stderr)
	}
	code := exitOK
	for _, f := range files {
		p, err := program.Lower(f)
		if err != nil {
			fmt.Fprintf(stderr, "rxeq lock: %s: %v\n", f.Name, err)
			return exitUsage
		}
		src, err := native.Generate(p)
		if err != nil {
			fmt.Fprintf(stdout, "FAIL %s: generating C: %v\n", f.Name, err)
			code = exitFail
			continue
		}
		for _, fn := range f.Funcs {
			if len(fn.Locks) == 0 {
				continue
			}
			res := lock.Check(src, native.CFuncName(fn.Name), fn.Locks)
			if res.OK {
				fmt.Fprintf(stdout, "PASS %s/%s: %d checks\n", f.ScenarioName(), fn.Name, len(fn.Locks))
				continue
			}
			code = exitFail
			fmt.Fprintf(stdout, "FAIL %s/%s\n%s\n", f.ScenarioName(), fn.Name, indent(res.Message))
		}
	}
	return code
}

// generatedNote heads the lock lines `rxeq lock --update` writes.
const generatedNote = "// lock lines written by rxeq lock --update from the generated C; edit or regenerate them"

// updateLocks rewrites, in each file, the positive lock lines of every
// function (or of only) with lock.Generate's: the old //rx:lock,
// lock-next and lock-same lines and the note go, //rx:lock-not lines
// stay, and the new lines follow the function's opening brace.
func updateLocks(files []*program.File, only string, stdout, stderr io.Writer) int {
	for _, f := range files {
		if only != "" && f.Func(only) == nil {
			fmt.Fprintf(stderr, "rxeq lock --update: %s has no function %s\n", f.Name, only)
			return exitUsage
		}
		p, err := program.Lower(f)
		if err != nil {
			fmt.Fprintf(stderr, "rxeq lock --update: %s: %v\n", f.Name, err)
			return exitUsage
		}
		csrc, err := native.Generate(p)
		if err != nil {
			fmt.Fprintf(stderr, "rxeq lock --update: %s: generating C: %v\n", f.Name, err)
			return exitFail
		}
		src, err := program.ReadFile(f.Name)
		if err != nil {
			fmt.Fprintf(stderr, "rxeq lock --update: %v\n", err)
			return exitUsage
		}
		lines := strings.Split(string(src), "\n")
		var notes []string
		// Bottom-up, so that the line numbers of earlier functions hold.
		for i := len(f.AST.Decls) - 1; i >= 0; i-- {
			fd, isFunc := f.AST.Decls[i].(*ast.FuncDecl)
			if !isFunc || fd.Body == nil || (only != "" && fd.Name.Name != only) {
				continue
			}
			open := f.Fset.Position(fd.Body.Lbrace).Line // 1-based
			close := f.Fset.Position(fd.Body.Rbrace).Line
			if close <= open {
				notes = append([]string{fd.Name.Name + ": not rewritten (its body is on one line)"}, notes...)
				continue
			}
			gen, err := lock.Generate(csrc, native.CFuncName(fd.Name.Name))
			if err != nil {
				fmt.Fprintf(stderr, "rxeq lock --update: %s: %v\n", f.Name, err)
				return exitFail
			}
			var body []string
			for _, l := range lines[open : close-1] {
				t := strings.TrimSpace(l)
				if t == generatedNote || strings.HasPrefix(t, "//rx:lock ") || strings.HasPrefix(t, "//rx:lock-next ") || strings.HasPrefix(t, "//rx:lock-same ") {
					continue
				}
				body = append(body, l)
			}
			var ins []string
			if len(gen) > 0 {
				ins = append(ins, "\t"+generatedNote)
				for _, g := range gen {
					ins = append(ins, "\t"+g)
				}
			}
			rebuilt := append(append(append([]string{}, lines[:open]...), ins...), body...)
			lines = append(rebuilt, lines[close-1:]...)
			what := fmt.Sprintf("%d lock lines", len(gen))
			if len(gen) == 0 {
				what = "no lock lines (no control flow)"
			}
			notes = append([]string{fmt.Sprintf("%s: %s", fd.Name.Name, what)}, notes...)
		}
		if err := os.WriteFile(f.Name, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			fmt.Fprintf(stderr, "rxeq lock --update: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(stdout, "updated %s: %s\n", f.Name, strings.Join(notes, ", "))
	}
	return exitOK
}
