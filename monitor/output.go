package monitor

import (
	"bytes"
	"os"
	"strings"
	"syscall"

	"github.com/story-automator/story-automator/internal/textline"
)

const (
	// maxScanPerLook bounds how much new output one look reads for done lines.
	maxScanPerLook = 4 << 20
	// maxPartialLine bounds a line still waiting for its newline.
	maxPartialLine = 64 << 10
)

// doneLineScanner counts explicit done lines in a growing output file,
// reading only what was appended since the last look.
type doneLineScanner struct {
	path    string
	offset  int64
	partial []byte
	count   int
}

// scan reads new output up to size and returns the number of done lines seen so far.
func (d *doneLineScanner) scan(size int64) int {
	if size < d.offset { // truncated or replaced: start over
		d.offset, d.partial, d.count = 0, nil, 0
	}
	if size == d.offset || d.path == "" {
		return d.count
	}
	f, err := os.OpenFile(d.path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return d.count
	}
	defer f.Close()
	n := size - d.offset
	if n > maxScanPerLook {
		n = maxScanPerLook
	}
	buf := make([]byte, n)
	got, _ := f.ReadAt(buf, d.offset)
	d.offset += int64(got)
	data := append(d.partial, buf[:got]...)
	last := bytes.LastIndexByte(data, '\n')
	if last < 0 {
		d.partial = keepTail(data)
		return d.count
	}
	for _, line := range strings.Split(textline.StripANSI(string(data[:last])), "\n") {
		for _, seg := range strings.Split(line, "\r") {
			if IsDoneLine(seg) {
				d.count++
			}
		}
	}
	d.partial = keepTail(data[last+1:])
	return d.count
}

// skipTo moves the scan past offset without counting what lies before it;
// an offset beyond the file's size (a replaced file) is ignored.
func (d *doneLineScanner) skipTo(offset, size int64) {
	if offset > d.offset && offset <= size {
		d.offset, d.partial = offset, nil
	}
}

func keepTail(b []byte) []byte {
	if len(b) > maxPartialLine {
		b = b[len(b)-maxPartialLine:]
	}
	return append([]byte(nil), b...)
}
