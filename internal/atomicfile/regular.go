package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrNotRegular is returned for a path that is a FIFO, device, socket or
// directory where a regular file is expected.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens path with flag, never through a symlink and never
// blocking: a FIFO at the path (whose open or read would wait forever for a
// writer) is opened non-blocking and refused with ErrNotRegular.
func OpenRegular(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, perm)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			// A write-only open of a FIFO with no reader.
			return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, fi.Mode().Type())
	}
	return f, nil
}
