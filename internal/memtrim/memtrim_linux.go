// Package memtrim gives back what a long-waiting process no longer needs
// resident: its free heap, and the pages of its own executable it touched
// while starting (command-line parsing, logging setup, the first look). A
// monitor-session waits for minutes with hundreds of others; without this,
// each kept about 8 MiB of the binary mapped that it never touches again
// while it waits. The pages stay in the page cache, shared: a page needed
// again is mapped back on first use (a minor fault), never read from disk.
package memtrim

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Trim returns the free heap to the kernel and unmaps the resident pages
// of the executable's read-only mappings (code and read-only data; never a
// writable one, whose pages are the program's own data). It reports how
// many bytes of mappings it released; errors leave things as they were.
func Trim() int {
	debug.FreeOSMemory()
	return TrimExecutable()
}

// TrimExecutable only unmaps the executable's resident read-only pages:
// cheap enough to do whenever the process goes back to sleep.
func TrimExecutable() int {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0
	}
	defer f.Close()
	released := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		start, end, ok := readOnlyMappingOf(sc.Text(), exe)
		if !ok {
			continue
		}
		// The raw call: the range is not Go memory, and no slice of it is made.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_DONTNEED); errno == 0 {
			released += int(end - start)
		}
	}
	return released
}

// readOnlyMappingOf parses one line of /proc/self/maps and returns the
// range of a mapping of file path that is neither writable nor shared.
func readOnlyMappingOf(line, path string) (start, end uintptr, ok bool) {
	fields := strings.Fields(line)
	if len(fields) < 6 || strings.Join(fields[5:], " ") != path {
		return 0, 0, false
	}
	perms := fields[1]
	if len(perms) != 4 || perms[1] == 'w' || perms[3] != 'p' {
		return 0, 0, false
	}
	lo, hi, found := strings.Cut(fields[0], "-")
	if !found {
		return 0, 0, false
	}
	s, err1 := strconv.ParseUint(lo, 16, 64)
	e, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || e <= s {
		return 0, 0, false
	}
	return uintptr(s), uintptr(e), true
}
