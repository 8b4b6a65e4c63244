// Command rxeq runs rxeq's differential equivalence tests.
//
//	rxeq run [flags] [PATH...]   run the built-in catalog or the given .rx files and directories
//	rxeq list [PATH...]          list scenarios, functions and batches
//	rxeq check PATH...           parse and check; print file:line:col: message
//	rxeq gen [--func F] FILE     print the generated C
//	rxeq export --format FORMAT FILE  write the program as a framework's model or module
//	rxeq lock FILE...            run the source-lock checks only
//	rxeq fuzz [flags]            differential fuzzing with random programs
//	rxeq reduce [flags] FILE     shrink a reproducer
//	rxeq sweep --backend NAME FILE  sweep one executor over many inputs, shrink a failing one
//
// Exit status: 0 when everything holds, 1 when a case or lock fails, 2 on
// bad usage or a program that does not check.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rextio/rxeq/internal/subproc"
	"github.com/rextio/rxeq/isolate"
	"github.com/rextio/rxeq/selftest"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

func main() {
	os.Exit(mainWithSignals(os.Args[1:]))
}

// mainWithSignals runs the command with a context that SIGINT and SIGTERM
// cancel, so that compilers, workers and executors it started are killed
// (each in its own process group) instead of being orphaned. The process
// is a child subreaper (on Linux): what an executor starts and leaves
// behind, even in a session of its own, is re-parented to rxeq, and
// whatever is still running below rxeq when the command returns is
// killed.
func mainWithSignals(args []string) int {
	_ = subproc.BecomeSubreaper() // outside Linux: unsupported, and the group kill is all there is
	tuneGC(os.Getenv)
	defer subproc.KillDescendants()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runMain(ctx, args, os.Stdout, os.Stderr)
}

const usage = `usage: rxeq <command> [arguments]

commands:
  run [flags] [PATH...]   run the built-in catalog or the given .rx files and directories
  list [PATH...]          list scenarios, functions and batches
  check PATH...           parse and check programs
  gen [--func F] FILE     print the C the native backend generates
  export --format FORMAT [--func F] [-o OUT] FILE
                          write the program as a framework's model or module
  import [--func NAME] [-o OUT.rx] [--weights DIR] MODEL.onnx
                          turn an ONNX model (weights included) into an .rx program
  conformance onnx [flags]  run ONNX's node tests through the executors
  lock [PATH...]          run the source-lock checks only
  fuzz [flags]            generate random programs, compare the executors, save reduced reproducers
  reduce [flags] FILE     shrink a reproducer to a small program that fails the same way
  selftest [PATH...]      prove the comparison fails: run deliberately wrong executors, expect each reported
  merge [flags] JSON...   join the JSON reports of shards into one JSON and one JUnit report
  sweep --backend NAME FILE  test one executor (your code) on many seeds and edge kinds, shrink a failure

Run 'rxeq <command> -h' for a command's flags.
`

// command is one subcommand: it parses args and returns the exit code.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// commands returns the subcommands by name.
func commands() map[string]command {
	return map[string]command{
		"run":         cmdRun,
		"list":        cmdList,
		"check":       cmdCheck,
		"gen":         cmdGen,
		"export":      cmdExport,
		"import":      cmdImport,
		"conformance": cmdConformance,
		"lock":        cmdLock,
		"fuzz":        cmdFuzz,
		"reduce":      cmdReduce,
		"selftest":    cmdSelftest,
		"merge":       cmdMerge,
		"sweep":       cmdSweep,
		// worker is hidden: rxeq starts it itself (run --isolate).
		isolate.WorkerArg: cmdWorker,
		// selftest-executor is hidden: rxeq selftest starts it itself.
		selftest.HostileArg: cmdSelftestExecutor,
	}
}

// runMain dispatches a subcommand and returns the exit code.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "rxeq: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	return cmd(ctx, args[1:], stdout, stderr)
}
