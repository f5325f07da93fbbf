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
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, readErr := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if readErr != nil {
		// EPERM from kill means the process exists; /proc may hide another
		// user's processes (hidepid), so a failed read then proves nothing.
		return err != nil || !errors.Is(readErr, os.ErrNotExist)
	}
	// The state letter follows the command name, which ends at the last ')'.
	i := bytes.LastIndexByte(b, ')')
	return !(i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X'))
}
