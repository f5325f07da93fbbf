package agent

import "strings"

// BlockCap is an agent CLI's own limit on consecutive Stop-hook blocks:
// after more than Default ($Env when set) blocks in a row it ends the turn,
// whatever the hook says.
type BlockCap struct {
	Product string // the CLI's name as a user knows it
	Env     string
	Default int
}

// sessionFacts are, per agent, the variable its shell tool sets to the
// session id, the one that only says a command runs inside one ("" = none),
// and its block cap (nil = none), read from the pinned CLIs. The order is
// precedence. Claude Code 2.1.x ends a turn after more than
// CLAUDE_CODE_STOP_HOOK_BLOCK_CAP (default 8) consecutive blocks.
var sessionFacts = []struct {
	agent, idVar, flagVar string
	cap                   *BlockCap
}{
	{AgentClaude, "CLAUDE_CODE_SESSION_ID", "CLAUDECODE", &BlockCap{Product: "Claude Code", Env: "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", Default: 8}},
	{AgentCodex, "CODEX_THREAD_ID", "", nil},
	// Copilot CLI 1.0.102's shell tool: COPILOT_AGENT_SESSION_ID and COPILOT_CLI=1.
	{AgentCopilot, "COPILOT_AGENT_SESSION_ID", "COPILOT_CLI", nil},
}

// AgentSessionID is the id of the agent session running this process
// ($CLAUDE_CODE_SESSION_ID, then $CODEX_THREAD_ID), or "" outside one: a
// marker made here is owned by it.
func AgentSessionID(getenv func(string) string) string {
	for _, f := range sessionFacts {
		if v := strings.TrimSpace(getenv(f.idVar)); v != "" {
			return v
		}
	}
	return ""
}

// InAgentSession reports whether this process runs inside an agent session's
// shell tool, even one that does not say its id (Claude Code sets CLAUDECODE=1).
func InAgentSession(getenv func(string) string) bool {
	if AgentSessionID(getenv) != "" {
		return true
	}
	for _, f := range sessionFacts {
		if f.flagVar != "" && strings.TrimSpace(getenv(f.flagVar)) == "1" {
			return true
		}
	}
	return false
}

// SessionBlockCap is the block cap of the agent session this process runs
// in (the first agent whose session variable is set); outside any known
// session it is the cap of the agent that has one, as the loop may yet run
// there. ok is false when the session's agent has no cap.
func SessionBlockCap(getenv func(string) string) (BlockCap, bool) {
	for _, f := range sessionFacts {
		if getenv(f.idVar) != "" {
			if f.cap == nil {
				return BlockCap{}, false
			}
			return *f.cap, true
		}
	}
	for _, f := range sessionFacts {
		if f.cap != nil {
			return *f.cap, true
		}
	}
	return BlockCap{}, false
}
