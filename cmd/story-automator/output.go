package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Failure is a command error the user sees: a stable snake_case code, a human
// message, the exit status, and optional extra JSON fields.
type Failure struct {
	Code    string
	Message string
	Exit    int
	Fields  map[string]any
}

func (f *Failure) Error() string { return f.Message }

// fail builds an operation failure (exit 1).
func fail(code, format string, args ...any) *Failure {
	return &Failure{Code: code, Message: fmt.Sprintf(format, args...), Exit: 1}
}

// usageError builds a usage failure (exit 2).
func usageError(format string, args ...any) *Failure {
	return &Failure{Code: "usage_error", Message: fmt.Sprintf(format, args...), Exit: 2}
}

// exitStatus is returned by commands that printed their own output and only
// need the process to end with a particular code.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// writeJSON prints one JSON object on its own line.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// okJSON prints {"ok":true, ...fields}.
func okJSON(w io.Writer, fields map[string]any) error {
	out := map[string]any{"ok": true}
	for k, v := range fields {
		out[k] = v
	}
	return writeJSON(w, out)
}

// failureJSON renders a Failure as {"ok":false,"error":code,"message":...}.
func failureJSON(w io.Writer, f *Failure) {
	out := map[string]any{"ok": false, "error": f.Code, "message": f.Message}
	for k, v := range f.Fields {
		out[k] = v
	}
	_ = writeJSON(w, out)
}

// refuseBlank refuses a flag given with a blank value: a blank model, agent
// or command would reach the agent's argv as it is.
func refuseBlank(c interface {
	IsSet(string) bool
	String(string) string
}, names ...string) error {
	for _, n := range names {
		if c.IsSet(n) && strings.TrimSpace(c.String(n)) == "" {
			return &Failure{Code: "invalid_flag", Message: fmt.Sprintf("--%s must not be blank", n), Exit: 2}
		}
	}
	return nil
}
