package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/tmux/child"
)

// Checkable lists the agents doctor can check, sorted: every one a story run
// can drive.
func Checkable() []string { return agent.RunAgents() }

// Agents are the agents to check: the ones asked for (repeatable, or
// comma-separated), else every agent CLI found on the PATH (or found too
// old), else the table's default (whose absence is then reported). An
// unknown name is an error that lists the known ones.
func Agents(ctx context.Context, asked, environ []string) ([]string, error) {
	if len(asked) == 0 {
		for _, a := range agent.CLIAgents() {
			if _, _, err := child.CheckAgent(ctx, a, environ); err == nil {
				asked = append(asked, a)
			} else if ae, ok := child.AsAgentError(err); ok && ae.Code == child.CodeAgentUnsupported {
				asked = append(asked, a)
			}
		}
		if len(asked) == 0 {
			asked = []string{agent.DefaultAgent()}
		}
		return asked, nil
	}
	var out []string
	for _, a := range asked {
		for _, one := range strings.Split(a, ",") {
			one = strings.TrimSpace(one)
			if !isCheckable(one) {
				return nil, fmt.Errorf("--agent %q: use %s", one, agent.OrList(Checkable()))
			}
			out = append(out, one)
		}
	}
	return out, nil
}

func isCheckable(agent string) bool {
	for _, a := range Checkable() {
		if a == agent {
			return true
		}
	}
	return false
}

// Failed counts the failed checks.
func (r Report) Failed() int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == Fail {
			n++
		}
	}
	return n
}
