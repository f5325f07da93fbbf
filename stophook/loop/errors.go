// Package loop holds a prompt loop's lifecycle rules: how a loop is shaped,
// started, imported from Ralph or Forge, paused, resumed, cancelled and
// reported, and what each state allows. The Stop hook (package stophook)
// drives a running loop; this package is what `story-automator loop` calls.
package loop

import "fmt"

// Exit statuses a loop error carries (SPEC: 1 = operation failed, 2 = usage).
const (
	ExitFailed = 1
	ExitUsage  = 2
)

// Error is a refused loop operation: a stable snake_case code, the message a
// user reads, an optional next step, and the exit status the command ends with.
type Error struct {
	Code    string
	Message string
	Hint    string
	Exit    int
}

func (e *Error) Error() string { return e.Message }

// ErrorCode, ExitStatus and ErrorHint let the command line map the error
// without knowing the rule behind it (see cliio.Coded).
func (e *Error) ErrorCode() string { return e.Code }
func (e *Error) ExitStatus() int   { return e.Exit }
func (e *Error) ErrorHint() string { return e.Hint }

func fail(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Exit: ExitFailed}
}

func usage(format string, args ...any) *Error {
	return &Error{Code: "usage_error", Message: fmt.Sprintf(format, args...), Exit: ExitUsage}
}
