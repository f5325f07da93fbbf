package stophook

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Level is how much a Log says: a line is written when its level is at or
// above the Log's.
type Level int8

// Levels, lowest first.
const (
	LevelDebug Level = iota
	LevelInfo
	LevelWarn
	LevelError
	levelOff
)

var levelNames = map[string]Level{"trace": LevelDebug, "debug": LevelDebug, "info": LevelInfo,
	"warn": LevelWarn, "error": LevelError, "fatal": LevelError, "panic": LevelError, "disabled": levelOff}

// Log writes the hook's log as JSON lines, each with its level, time,
// fields and message (the main binary's log format), so the hook links no
// logging library. The zero Log writes nothing.
type Log struct {
	w   io.Writer
	min Level
	now func() time.Time
}

// NewLog is a Log writing lines at level min or above to w.
func NewLog(w io.Writer, min Level) Log { return Log{w: w, min: min, now: time.Now} }

// Logger is the hook's Log, built leniently: an unknown level is warn, and
// a log file that cannot be opened leaves the log on stderr.
func Logger(level, file string, stderr io.Writer) Log {
	lv, ok := levelNames[strings.ToLower(level)]
	if !ok {
		lv = LevelWarn
	}
	w := stderr
	if file != "" {
		if f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			w = f
		}
	}
	return NewLog(w, lv)
}

// Debug, Warn and Error write msg with fields given as name, value pairs
// (an error's value is its message, a duration's its milliseconds).
func (l Log) Debug(msg string, fields ...any) { l.write(LevelDebug, "debug", msg, fields) }
func (l Log) Warn(msg string, fields ...any)  { l.write(LevelWarn, "warn", msg, fields) }
func (l Log) Error(msg string, fields ...any) { l.write(LevelError, "error", msg, fields) }

func (l Log) write(lv Level, name, msg string, fields []any) {
	if l.w == nil || lv < l.min {
		return
	}
	var b strings.Builder
	b.WriteString(`{"level":"` + name + `","time":"` + l.now().Format(time.RFC3339) + `"`)
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i+1] == nil {
			continue
		}
		b.WriteString("," + quote(fmt.Sprint(fields[i])) + ":" + fieldValue(fields[i+1]))
	}
	b.WriteString(`,"message":` + quote(msg) + "}\n")
	_, _ = io.WriteString(l.w, b.String()) // the hook fails open, its log too
}

func fieldValue(v any) string {
	switch v := v.(type) {
	case error:
		return quote(v.Error())
	case string:
		return quote(v)
	case time.Duration:
		return fmt.Sprintf("%g", float64(v)/float64(time.Millisecond))
	}
	if j, err := json.Marshal(v); err == nil {
		return string(j)
	}
	return quote(fmt.Sprint(v))
}

func quote(s string) string {
	j, _ := json.Marshal(s)
	return string(j)
}
