package orchestrator

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync flushes f's data (not its metadata, which the journal never needs).
func datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
