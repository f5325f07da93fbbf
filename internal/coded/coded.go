// Package coded is the error a domain package returns when a refusal has a
// place in the command line's contract: a stable snake_case code, the message
// a user reads, an optional next step, the exit status, and extra JSON fields.
// It satisfies cliio.Coded, so a command maps it to its failure without
// knowing the rule that refused, and the domain package needs no cliio.
package coded

import "fmt"

// Exit statuses (SPEC: 1 = the operation failed, 2 = a usage error).
const (
	ExitFailed = 1
	ExitUsage  = 2
)

// Error is a refused operation.
type Error struct {
	Code    string
	Message string
	Hint    string
	Exit    int
	Fields  map[string]any
	// Err is the cause, when the refusal wraps one (errors.Is sees it).
	Err error
}

func (e *Error) Error() string { return e.Message }

// Unwrap is the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode, ExitStatus, ErrorHint and ErrorFields are what cliio.Coded reads.
func (e *Error) ErrorCode() string           { return e.Code }
func (e *Error) ExitStatus() int             { return e.Exit }
func (e *Error) ErrorHint() string           { return e.Hint }
func (e *Error) ErrorFields() map[string]any { return e.Fields }

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
