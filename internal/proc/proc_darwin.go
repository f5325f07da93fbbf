package proc

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// Alive reports whether pid names a running process: it exists (even
// if owned by another user) and is not a zombie waiting to be reaped. macOS
// has no /proc: the kernel's process table (sysctl kern.proc.pid) says.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	switch {
	case errors.Is(err, syscall.EIO), err == nil && kp.Proc.P_pid != int32(pid): //nolint:gosec // G115: a pid fits in an int32
		return false // reaped between the two looks: the table has no such pid
	case err != nil:
		return true // kill found it; a table we cannot read proves nothing
	}
	return kp.Proc.P_stat != sZomb
}

// sZomb is the state of a process that has exited and waits to be reaped
// (<sys/proc.h>).
const sZomb = 5

// Start returns when pid started, in microseconds since the epoch (the
// kernel's p_starttime): with the pid it names one process for good, where a
// pid alone may be reused by an unrelated process. ok is false when it
// cannot be read.
func Start(pid int) (start uint64, ok bool) {
	if pid <= 0 {
		return 0, false
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) { //nolint:gosec // G115: a pid fits in an int32
		return 0, false
	}
	t := kp.Proc.P_starttime
	return uint64(t.Sec)*1_000_000 + uint64(t.Usec), true //nolint:gosec // G115: a start time is after the epoch
}
