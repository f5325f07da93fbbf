//go:build linux || darwin || freebsd

// What the Linux and the kqueue kernels share.

package wake

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// pollable makes fd non-blocking and hands it to the Go netpoller: reads
// through the returned RawConn wait there, using no CPU. On failure fd is
// closed and the error is errNoKernel.
func pollable(fd int, name string) (*os.File, syscall.RawConn, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, nil, errNoKernel
	}
	f := os.NewFile(uintptr(fd), name)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, nil, errNoKernel
	}
	return f, rc, nil
}

// close ends every watch, once: release, which each kernel has, frees its
// descriptors with k.mu held.
func (k *kernel) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closing {
		return
	}
	k.closing = true
	k.release()
}
