package kq

import "golang.org/x/sys/unix"

// dirOpenFlags opens a directory for its events only (it does not keep a
// volume from being unmounted).
const dirOpenFlags = unix.O_EVTONLY
