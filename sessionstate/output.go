package sessionstate

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/story-automator/story-automator/internal/textline"
)

// tailWindow is how much of the end of an output file OutputTail reads.
const tailWindow = 256 << 10

// OutputTail returns the last lines lines (50 when 0) of a session's output
// file as plain text: escapes removed, carriage-return overwrites resolved.
func OutputTail(path string, lines int) (string, error) {
	if lines <= 0 {
		lines = 50
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", fmt.Errorf("open output file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	start := fi.Size() - tailWindow
	if start < 0 {
		start = 0
	}
	data, err := io.ReadAll(io.NewSectionReader(f, start, fi.Size()-start))
	if err != nil {
		return "", err
	}
	var out []string
	for _, l := range strings.Split(textline.StripANSI(string(data)), "\n") {
		l = strings.TrimRight(l, "\r")
		if i := strings.LastIndexByte(l, '\r'); i >= 0 {
			l = l[i+1:]
		}
		out = append(out, l)
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	if len(out) > lines {
		out = out[len(out)-lines:]
	}
	if len(out) == 0 {
		return "", nil
	}
	return strings.Join(out, "\n") + "\n", nil
}
