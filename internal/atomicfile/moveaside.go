package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// CorruptSuffix starts the name a corrupt file is moved aside to:
// "<name>.corrupt-<UTC time>".
const CorruptSuffix = ".corrupt-"

// MoveAside renames a file that cannot be read as what it should be to
// "<path>.corrupt-<UTC time, 20060102T150405Z>" in the same directory, so
// the tool can go on without it and the user still has it to look at. A
// name already taken (two moved aside in one second) gets "-2", "-3", …
// It works on whatever is at path (a FIFO, a symlink, a directory) and
// returns the new path.
func MoveAside(path string, now time.Time) (string, error) {
	base := path + CorruptSuffix + now.UTC().Format("20060102T150405Z")
	to := base
	for n := 2; ; n++ {
		if _, err := os.Lstat(to); errors.Is(err, os.ErrNotExist) {
			break
		}
		if n > 100 {
			return "", fmt.Errorf("move %s aside: every name like %s is taken", path, base)
		}
		to = base + "-" + strconv.Itoa(n)
	}
	if err := os.Rename(path, to); err != nil {
		return "", fmt.Errorf("move %s aside: %w", path, err)
	}
	return to, nil
}
