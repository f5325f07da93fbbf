package marker

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// ProcessAlive reports whether pid names a running process: it exists (even
// if owned by another user) and is not a zombie waiting to be reaped — an
// orchestrator or runner that has exited is dead even when nobody reaped it.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// The state letter follows the command name, which ends at the last ')'.
	i := bytes.LastIndexByte(b, ')')
	return !(i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X'))
}
