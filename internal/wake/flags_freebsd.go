package wake

import "golang.org/x/sys/unix"

const (
	dirOpenFlags  = unix.O_RDONLY | unix.O_DIRECTORY
	fileOpenFlags = unix.O_RDONLY
)
