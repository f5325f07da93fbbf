package monitor

// FinalState is how a monitor-session call ends (docs/reference.md, "monitor-session final states").
type FinalState string

// Final states.
const (
	Completed  FinalState = "completed"
	Incomplete FinalState = "incomplete"
	Crashed    FinalState = "crashed"
	Stuck      FinalState = "stuck"
	NotFound   FinalState = "not_found"
	TimedOut   FinalState = "timeout"
	Running    FinalState = "running"
	// Limited: the agent's CLI gave up on a usage limit, rate limit or API
	// fault; Reason says which and ResetsAt when it lifts, if known.
	Limited FinalState = "limited"
)

// ExitCode is the process exit code monitor-session uses for the state.
func (s FinalState) ExitCode() int {
	switch s {
	case Completed:
		return 0
	case Incomplete:
		return 3
	case Crashed:
		return 4
	case Stuck:
		return 5
	case NotFound:
		return 6
	case TimedOut:
		return 7
	case Running:
		return 8
	case Limited:
		return 9
	}
	return 1
}

// Completion signals, in the order of trust; a completed result's reason names one.
const (
	SignalExit     = "agent_exited"
	SignalStopHook = "stop_hook"
	SignalDoneLine = "done_line"
	SignalScreen   = "screen_heuristic"
)

// Reasons of the other final states.
const (
	ReasonNotVerified   = "not_verified"
	ReasonContract      = "verifier_contract"
	ReasonSessionGone   = "session_gone"
	ReasonNoSuchSession = "no_such_session"
	ReasonNeverStarted  = "never_started"
	ReasonNoProgress    = "no_progress"
	// ReasonDialog: the child waits at a dialog only its user can settle.
	ReasonDialog      = "dialog"
	ReasonTimeout     = "timeout"
	ReasonReturnAfter = "return_after"
	ReasonInterrupted = "interrupted"
	// Reasons of a limited result.
	ReasonUsageLimit = "usage_limit"
	ReasonRateLimit  = "rate_limit"
	ReasonOverloaded = "overloaded"
	ReasonAPIError   = "api_error"

	reasonExitCodePrefix = "exit_code_"
	reasonSignalPrefix   = "signal_"
)

// Result is monitor-session's JSON answer.
type Result struct {
	OK             bool           `json:"ok"`
	Session        string         `json:"session"`
	FinalState     FinalState     `json:"finalState"`
	Reason         string         `json:"reason"`
	ExitCode       *int           `json:"exitCode"`
	OutputFile     string         `json:"outputFile"`
	OutputVerified bool           `json:"outputVerified"`
	Verifier       VerifierReport `json:"verifier"`
	ElapsedSeconds float64        `json:"elapsedSeconds"`
	// Rechecks is how many verifications were made in all.
	Rechecks int `json:"rechecks"`
	// Dialog and Action name, for a child stuck at a dialog, which dialog it
	// is and the one thing the user must do.
	Dialog string `json:"dialog,omitempty"`
	Action string `json:"action,omitempty"`
	// ResetsAt is, for a limited result, when the limit lifts (RFC 3339;
	// empty when unknown); Agent is the agent that met it.
	ResetsAt string `json:"resetsAt,omitempty"`
	Agent    string `json:"agent,omitempty"`
}

// VerifierReport describes the verifier and its last verdict.
type VerifierReport struct {
	Name     string `json:"name"`
	Verified bool   `json:"verified"`
	Detail   string `json:"detail,omitempty"`
	Attempts int    `json:"attempts"`
}
