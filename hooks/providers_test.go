package hooks

// The providers the tests name: the profile table's agents that take the hook.
const (
	Claude  Provider = "claude"
	Codex   Provider = "codex"
	Gemini  Provider = "gemini"
	Copilot Provider = "copilot"
)

// EventAfterAgent is Gemini CLI's turn-ending hook event, as its profile names it.
const EventAfterAgent = "AfterAgent"
