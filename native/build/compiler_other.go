//go:build !linux

package build

import "os"

// ScratchDir is where a throwaway build cache belongs: os.TempDir()
// outside Linux (see the Linux build for /dev/shm).
func ScratchDir() string { return os.TempDir() }
