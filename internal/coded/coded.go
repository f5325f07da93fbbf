// Package coded is the one user-facing error: a stable snake_case code, the
// message a user reads, an optional next step, the exit status and extra JSON
// fields. Domain packages return it; cliio.ExitCode finds it anywhere in a
// returned error's chain and prints it, so no caller has to convert it.
package coded

import "fmt"

// Exit statuses (SPEC: 1 = the operation failed, 2 = a usage error).
const (
	ExitFailed = 1
	ExitUsage  = 2
	// ExitDoneWithParked: `run` did every story it could and parked the
	// rest for a person (done_with_parked).
	ExitDoneWithParked = 10
)

// Error is a refused or failed operation as the user sees it.
type Error struct {
	Code    string
	Message string
	// Action is the one thing the user can do next; "" when there is none.
	Action string
	Exit   int
	Fields map[string]any
	// Err is the cause, when the refusal wraps one (errors.Is sees it).
	Err error
}

func (e *Error) Error() string { return e.Message }

// Unwrap is the cause.
func (e *Error) Unwrap() error { return e.Err }

// WithAction sets the error's next step and returns it.
func (e *Error) WithAction(format string, args ...any) *Error {
	e.Action = fmt.Sprintf(format, args...)
	return e
}

// Fail is a failed operation (exit 1) with its code.
func Fail(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Exit: ExitFailed}
}

// Wrap is err as a failed operation (exit 1) with its code; its message is err's.
func Wrap(code string, err error) *Error {
	return &Error{Code: code, Message: err.Error(), Exit: ExitFailed, Err: err}
}

// WrapUsage is err as a usage error (code usage_error, exit 2).
func WrapUsage(err error) *Error {
	return &Error{Code: "usage_error", Message: err.Error(), Exit: ExitUsage, Err: err}
}

// Usage is a usage error (code usage_error, exit 2).
func Usage(format string, args ...any) *Error {
	return &Error{Code: "usage_error", Message: fmt.Sprintf(format, args...), Exit: ExitUsage}
}
