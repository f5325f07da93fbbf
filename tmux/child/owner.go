package child

import "github.com/story-automator/story-automator/agent"

// MarkerOwner is the owning session of a marker this process makes: the
// one given when given (set), else the agent session this process runs in.
// claimOnStop is true when that names none although this process runs inside
// an agent session that does not say its id: the first session to stop then
// claims the marker.
func MarkerOwner(given string, set bool, getenv func(string) string) (owner string, claimOnStop bool) {
	if set {
		return given, false
	}
	owner = agent.AgentSessionID(getenv)
	return owner, owner == "" && agent.InAgentSession(getenv)
}
