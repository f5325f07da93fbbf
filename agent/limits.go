package agent

// Limits are how an agent CLI shows that it gave up at a usage limit, a
// rate limit or an API fault, as data: package limit reads a child's
// hook stamp, records, screen and last output with them (real captures of
// the pinned CLIs are kept under monitor/testdata/limits).
type Limits struct {
	// HookEvent is the hook event the CLI fires when a turn ends in an API
	// error, registered for each child beside its Stop hook ("StopFailure");
	// "" = none. HookErrors map the error the event names to a reason; an
	// error not listed is no limit.
	HookEvent  string
	HookErrors map[string]string
	// Record names the CLI's own record that holds the limit's exact reset
	// time (LimitRecordTranscript); "" = none.
	Record string
	// Signs are the texts that say the CLI gave up, most specific first.
	Signs []LimitSign
	// AutoContinue is on screen while the CLI means to go on by itself at
	// the reset, and CancelKey stops it from doing so, which Cancelled then
	// shows: a limited child must not run its turn again behind the run's back.
	AutoContinue, CancelKey, Cancelled string
	// Busy is on screen while the CLI works on a turn: a limit sign on
	// such a screen is an earlier turn's, still in view.
	Busy string
}

// LimitSign is one text that says the CLI gave up, and how it names the
// time the limit lifts.
type LimitSign struct {
	Reason string
	// Needles all appear when the sign is there.
	Needles []string
	// OnExit: looked for in the last output of a child that exited
	// non-zero; else on its live screen.
	OnExit bool
	// ResetAfter precedes the reset time in the text; Reset names how that
	// time is written (ResetClock, ResetDelay). "" = the sign names none.
	ResetAfter, Reset string
}

// Reasons a limit sign gives (the monitor's limited reasons).
const (
	LimitUsage      = "usage_limit"
	LimitRate       = "rate_limit"
	LimitOverloaded = "overloaded"
	LimitAPIError   = "api_error"
)

// How a sign writes the reset time.
const (
	// ResetClock: a time of day, perhaps with a date before it and a zone
	// after it: "3:14pm (UTC)", "Nov 30, 8:15am (America/New_York)",
	// "12:56 PM" (local time), "Nov 28th, 2026 2:16 PM", "2:15 PM UTC".
	ResetClock = "clock"
	// ResetDelay: a delay from when the text was written, "3600s".
	ResetDelay = "delay"
)

// LimitRecordTranscript: Claude Code's transcript, whose synthetic
// assistant line (isApiErrorMessage) carries apiError and
// apiErrorParams.rate_limit_info.resetsAt (epoch seconds).
const LimitRecordTranscript = "transcript-api-error"

// LimitRecordRollout: Codex's rollout under its state directory, named by
// the session id its exec output prints, whose token count carries
// rate_limits.primary.resets_at (epoch seconds) and whose failed turn
// codex_error_info usage_limit_exceeded.
const LimitRecordRollout = "rollout-usage-limit"

// LimitRecordOpenCodeDB: OpenCode's database under its state directory,
// whose failed assistant message keeps the API's status and response
// headers (an Anthropic usage limit's anthropic-ratelimit-unified-reset).
const LimitRecordOpenCodeDB = "opencode-db-error"

// IsLimitEvent reports whether a hook event is some agent's limit event.
func IsLimitEvent(event string) bool {
	if event == "" {
		return false
	}
	for _, p := range profiles {
		if p.Limits.HookEvent == event {
			return true
		}
	}
	return false
}

// claudeLimits: Claude Code 2.1.328 fires StopFailure with "error":
// "rate_limit" at a usage or rate limit (its matcher lists overloaded,
// server_error and unknown too); a subscriber's limit reads "You've hit
// your 5-hour limit · resets 3:14pm (UTC)" and then, interactive, "Usage
// limit reached · continuing automatically at 3:14pm · esc to cancel".
var claudeLimits = Limits{
	HookEvent: "StopFailure",
	HookErrors: map[string]string{"rate_limit": LimitRate, "overloaded": LimitOverloaded,
		"server_error": LimitAPIError, "unknown": LimitAPIError},
	Record: LimitRecordTranscript,
	Signs: []LimitSign{
		{Reason: LimitUsage, Needles: []string{"You've hit your", "limit · resets "}, ResetAfter: "resets ", Reset: ResetClock},
		{Reason: LimitUsage, Needles: []string{"You've hit your", "limit · resets "}, ResetAfter: "resets ", Reset: ResetClock, OnExit: true},
		{Reason: LimitUsage, Needles: []string{"Usage limit reached · "}, ResetAfter: "continuing automatically at ", Reset: ResetClock},
		{Reason: LimitRate, Needles: []string{"API Error: Request rejected (429)"}, OnExit: true},
		{Reason: LimitRate, Needles: []string{"API Error: Request rejected (429)"}},
		{Reason: LimitOverloaded, Needles: []string{"API Error: Repeated 529 Overloaded errors"}, OnExit: true},
		{Reason: LimitOverloaded, Needles: []string{"API Error: Repeated 529 Overloaded errors"}},
	},
	// A key pressed while its StopFailure hook still runs can be lost, so
	// the cancel is pressed until the screen says it took.
	AutoContinue: "continuing automatically at", CancelKey: "Escape", Cancelled: "Automatic continue cancelled",
	Busy: "esc to interrupt",
}

// codexLimits: Codex 0.169 exec prints the usage limit (U+2019 in
// "You’ve") with the reset in local time and exits 1; interactive, it
// shows the same line and an "Approaching rate limits" modal. A plain rate
// limit, once retried, and an overloaded model end exec the same way.
var codexLimits = Limits{
	Record: LimitRecordRollout,
	Signs: []LimitSign{
		{Reason: LimitUsage, Needles: []string{"You’ve hit your usage limit"}, ResetAfter: "try again at ", Reset: ResetClock, OnExit: true},
		{Reason: LimitUsage, Needles: []string{"You’ve hit your usage limit", "Approaching rate limits"}, ResetAfter: "try again at ", Reset: ResetClock},
		{Reason: LimitRate, Needles: []string{"ERROR: exceeded retry limit, last status: 429"}, OnExit: true},
		{Reason: LimitOverloaded, Needles: []string{"ERROR: Selected model is at capacity"}, OnExit: true},
		{Reason: LimitAPIError, Needles: []string{"ERROR: exceeded retry limit, last status: 5"}, OnExit: true},
		// A 500, retried: "We’re currently experiencing high demand, which may cause temporary errors."
		{Reason: LimitAPIError, Needles: []string{"ERROR: We’re currently experiencing high demand"}, OnExit: true},
		{Reason: LimitAPIError, Needles: []string{"ERROR: stream disconnected before completion"}, OnExit: true},
	},
}

// geminiLimits: Gemini CLI 0.61 retries a per-minute quota by itself
// ("Attempt N failed … Retrying": no limit yet) and gives up on a per-day
// quota (no reset time) or a retry delay over 5 minutes ("Suggested retry
// after 3600s."), exiting 1 in -p; interactive, it shows "Usage limit
// reached for <model>." with "Access resets at 2:15 PM UTC." when known.
var geminiLimits = Limits{
	Signs: []LimitSign{
		{Reason: LimitUsage, Needles: []string{"TerminalQuotaError:", "Suggested retry after "}, ResetAfter: "Suggested retry after ", Reset: ResetDelay, OnExit: true},
		{Reason: LimitUsage, Needles: []string{"TerminalQuotaError:"}, OnExit: true},
		{Reason: LimitUsage, Needles: []string{"Usage limit reached for ", "Access resets at "}, ResetAfter: "Access resets at ", Reset: ResetClock},
		{Reason: LimitUsage, Needles: []string{"Usage limit reached for ", "Keep trying"}},
		// After its 10 attempts: "Attempt 10 failed: The model is overloaded. … Max attempts reached".
		{Reason: LimitOverloaded, Needles: []string{"Max attempts reached", "overloaded"}, OnExit: true},
		{Reason: LimitAPIError, Needles: []string{"Max attempts reached", "Error when talking to Gemini API"}, OnExit: true},
		// A dropped stream, once retried: "TypeError: terminated … SocketError: other side closed".
		{Reason: LimitAPIError, Needles: []string{"Error when talking to Gemini API", "SocketError: other side closed"}, OnExit: true},
	},
}

// copilotLimits: Copilot CLI 1.0.102 in -p retries a usage limit, an
// overloaded or failing server 5 times ("Request failed due to a transient
// API error. Retrying..."), then prints "Failed to get response from the
// AI model; retried 5 times (…) Last error: <status> <the API's message>"
// and exits 1, naming no reset time; a rate limit whose retry is far off it
// prints at once as "<status> <message>" on a line of its own.
var copilotLimits = Limits{
	Signs: []LimitSign{
		{Reason: LimitUsage, Needles: []string{"Failed to get response from the AI model", "Last error: 429 The usage limit has been reached"}, OnExit: true},
		{Reason: LimitRate, Needles: []string{"Failed to get response from the AI model", "Last error: 429"}, OnExit: true},
		// "429 <message>", then its closing summary ("Resume copilot --resume=<id>").
		{Reason: LimitRate, Needles: []string{"429 ", "Resume copilot --resume="}, OnExit: true},
		{Reason: LimitOverloaded, Needles: []string{"Failed to get response from the AI model", "Last error: 503"}, OnExit: true},
		{Reason: LimitOverloaded, Needles: []string{"Failed to get response from the AI model", "Last error: 529"}, OnExit: true},
		{Reason: LimitAPIError, Needles: []string{"Failed to get response from the AI model", "Last error: 5"}, OnExit: true},
	},
}

// openCodeLimits: OpenCode 1.18.33 retries a 429 by itself (a usage limit
// too, whatever its reset headers say), five times over about 100 s; then,
// as at a 529 or a 500, `run` prints "Error: " and the API's own message
// and exits 1 (its database keeps the status and the response headers).
var openCodeLimits = Limits{
	Record: LimitRecordOpenCodeDB,
	Signs: []LimitSign{
		{Reason: LimitUsage, Needles: []string{"Error: ", "usage limit"}, OnExit: true},
		{Reason: LimitRate, Needles: []string{"Error: ", "rate limit"}, OnExit: true},
		{Reason: LimitOverloaded, Needles: []string{"Error: ", "Overloaded"}, OnExit: true},
		{Reason: LimitAPIError, Needles: []string{"Error: ", "internal server error"}, OnExit: true},
	},
}

func init() {
	// The simulated agent meets a limit as Claude Code does (agentsim.EnvLimit).
	for n, l := range map[string]Limits{AgentClaude: claudeLimits, AgentCodex: codexLimits, AgentGemini: geminiLimits,
		AgentCopilot: copilotLimits, AgentOpenCode: openCodeLimits, AgentSim: claudeLimits} {
		p := profiles[n]
		p.Limits = l
		profiles[n] = p
	}
}
