//go:build !linux

package orchestrator

import "os"

// datasync flushes f; systems without fdatasync (macOS) get a full fsync.
func datasync(f *os.File) error { return f.Sync() }
