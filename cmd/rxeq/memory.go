package main

import (
	"fmt"
	"strings"

	"github.com/rextio/rxeq/harness"
)

// memoryFlag is --max-memory: a size such as 4GiB or 512MiB
// (harness.ParseBytes), or "off" for no budget. Its value is what
// harness.Options.MaxMemory and fuzz.Checker.MaxMemory take: 0 (not given)
// for harness.DefaultMaxMemory, -1 for off.
type memoryFlag int64

func (m *memoryFlag) String() string {
	switch {
	case m == nil || *m == 0:
		return ""
	case *m < 0:
		return "off"
	}
	return harness.FormatBytes(uint64(*m))
}

// Type names the value in usage lines.
func (m *memoryFlag) Type() string { return "size" }

func (m *memoryFlag) Set(s string) error {
	if strings.EqualFold(strings.TrimSpace(s), "off") {
		*m = -1
		return nil
	}
	n, err := harness.ParseBytes(s)
	if err != nil {
		return err
	}
	*m = memoryFlag(n)
	return nil
}

// resolve returns the budget in bytes for fuzz.Checker.MaxMemory: the
// machine's default (read once, not per program) when not given.
func (m *memoryFlag) resolve() int64 {
	if *m == 0 {
		return harness.DefaultMaxMemory()
	}
	return int64(*m)
}

// maxMemory registers --max-memory on fs.
func maxMemory(fs *flagSet) *memoryFlag {
	m := new(memoryFlag)
	fs.Var(m, "max-memory", fmt.Sprintf("memory budget of the cases, like 4GiB or 512MiB, or off; a case needing more is not run "+
		"(default: half the available memory, %s here)", harness.FormatBytes(uint64(harness.DefaultMaxMemory()))))
	return m
}
