package stophook

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The hook's log lines are JSON with the main binary's keys (level, time,
// fields, message), and a level below the Log's writes nothing.
func TestLogWritesJSONLinesAtItsLevel(t *testing.T) {
	var buf bytes.Buffer
	l := Logger("INFO", "", &buf)
	l.Debug("quiet")
	l.Warn("cannot persist", "error", errors.New("disk \"full\""), "session", "s1", "took", 1500*time.Microsecond, "none", nil)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("lines = %q", lines)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatalf("%v: %s", err, lines[0])
	}
	if got["level"] != "warn" || got["message"] != "cannot persist" || got["error"] != `disk "full"` ||
		got["session"] != "s1" || got["took"] != 1.5 || got["time"] == nil || got["none"] != nil {
		t.Fatalf("line = %v", got)
	}
	Log{}.Error("the zero Log writes nothing")
}

// An unknown level is warn; a log file that cannot be opened leaves the log on stderr.
func TestLoggerIsLenient(t *testing.T) {
	var buf bytes.Buffer
	l := Logger("bogus", filepath.Join(t.TempDir(), "no", "such", "dir", "log"), &buf)
	l.Debug("hidden")
	l.Warn("shown")
	if !strings.Contains(buf.String(), `"message":"shown"`) || strings.Contains(buf.String(), "hidden") {
		t.Fatalf("log = %q", buf.String())
	}
}
