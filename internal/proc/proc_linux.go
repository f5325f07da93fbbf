package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// Alive reports whether pid names a running process: it exists (even
// if owned by another user) and is not a zombie waiting to be reaped — an
// orchestrator or runner that has exited is dead even when nobody reaped it.
func Alive(pid int) bool {
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
		// A process reaped between the two looks reads as ESRCH.
		return err != nil || !(errors.Is(readErr, os.ErrNotExist) || errors.Is(readErr, syscall.ESRCH))
	}
	// The state letter follows the command name, which ends at the last ')'.
	i := bytes.LastIndexByte(b, ')')
	return !(i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X'))
}

// Start returns when pid started, in clock ticks since boot (field 22
// of /proc/<pid>/stat): with the pid it names one process for good, where a
// pid alone may be reused by an unrelated process. ok is false when it
// cannot be read.
func Start(pid int) (start uint64, ok bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	// After ") " come fields 3 (state) onwards; the start time is field 22.
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(f[19]), 10, 64)
	return v, err == nil
}
