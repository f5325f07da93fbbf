package child

import (
	"sort"
	"strings"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/sessionstate"
)

// Variables every child gets.
const (
	EnvChild    = sessionstate.EnvChild
	EnvSession  = sessionstate.EnvSession
	EnvStateDir = sessionstate.EnvStateDir
	EnvAgent    = "STORY_AUTOMATOR_AGENT"
	EnvStep     = "STORY_AUTOMATOR_STEP"
	EnvStory    = "STORY_AUTOMATOR_STORY"
	EnvEpic     = "STORY_AUTOMATOR_EPIC"
	// EnvWorkDir is the folder a child works in when it is not the project
	// root: the story's git worktree.
	EnvWorkDir = "STORY_AUTOMATOR_WORKDIR"
)

// Variables a run's orchestrator adds for every child on top of the
// spawner's: which attempt, review cycle and agent role (primary or
// fallback) it is, and the run it belongs to.
const (
	EnvAttempt = "STORY_AUTOMATOR_ATTEMPT"
	EnvCycle   = "STORY_AUTOMATOR_CYCLE"
	EnvRole    = "STORY_AUTOMATOR_ROLE"
	EnvRunID   = "STORY_AUTOMATOR_RUN_ID"
)

// clearedVars must not leak from the spawner into a child: every agent's
// session variables (its nesting guard and session id, Profile.SessionEnv:
// a child is never the run's owner), a shell startup file, and the tmux
// client of the spawner.
func clearedVars() []string {
	return append(agent.SessionVars(), "BASH_ENV", "ENV", "TMUX", "TMUX_PANE")
}

// ChildEnv is base without the cleared variables, with set applied on top
// (set wins), sorted for a stable spec file.
func ChildEnv(base []string, set map[string]string) []string {
	vals := map[string]string{}
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		vals[k] = v
	}
	for _, k := range clearedVars() {
		delete(vals, k)
	}
	for k, v := range set {
		vals[k] = v
	}
	out := make([]string, 0, len(vals))
	for k, v := range vals {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
