package wake

import "golang.org/x/sys/unix"

// A watched file or directory is opened for its events only (it does not
// keep a volume from being unmounted).
const (
	dirOpenFlags  = unix.O_EVTONLY
	fileOpenFlags = unix.O_EVTONLY
)
