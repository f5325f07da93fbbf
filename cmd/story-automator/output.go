package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Failure is a command error the user sees: a stable snake_case code, a human
// message, what the user can do about it, the exit status, and optional extra
// JSON fields.
type Failure struct {
	Code    string
	Message string
	// Action is the one thing the user can do next; "" when there is none.
	Action string
	Exit   int
	Fields map[string]any
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

// withAction sets the failure's next step and returns it.
func (f *Failure) withAction(format string, args ...any) *Failure {
	f.Action = fmt.Sprintf(format, args...)
	return f
}

// exitStatus is returned by commands that printed their own output and only
// need the process to end with a particular code.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// writeJSON prints one JSON object on its own line — or, when w is a person's
// terminal (see terminalOut), the same value as text. Every command's result
// goes through here, so every command gets both forms.
func writeJSON(w io.Writer, v any) error {
	if t, ok := w.(*terminalOut); ok {
		return t.render(v)
	}
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

// emit prints a result: JSON for machines, or human's own rendering of it on a
// terminal. Commands with a better text form than the generic one use this.
func emit(w io.Writer, v any, human func(io.Writer)) error {
	if t, ok := w.(*terminalOut); ok && human != nil {
		human(t.Writer)
		return nil
	}
	return writeJSON(w, v)
}

// failureFields renders a Failure as {"ok":false,"error":code,"message":...}.
func failureFields(f *Failure) map[string]any {
	out := map[string]any{"ok": false, "error": f.Code, "message": f.Message}
	if f.Action != "" {
		out["action"] = f.Action
	}
	for k, v := range f.Fields {
		out[k] = v
	}
	return out
}

// failureJSON prints a Failure's JSON on w (always JSON: scripts read it).
func failureJSON(w io.Writer, f *Failure) {
	if t, ok := w.(*terminalOut); ok {
		w = t.Writer
	}
	_ = writeJSON(w, failureFields(f))
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
