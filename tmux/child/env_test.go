package child

import (
	"strings"
	"testing"
)

func TestChildEnvClearsAndSets(t *testing.T) {
	base := []string{"PATH=/bin", "CLAUDECODE=1", "BASH_ENV=/x", "TMUX=/tmp/s,1,0", "TMUX_PANE=%1",
		"CLAUDE_CODE_SESSION_ID=owner", "HOME=/h", "STORY_AUTOMATOR_CHILD=false", "garbage"}
	env := ChildEnv(base, map[string]string{EnvChild: "true", EnvSession: "sa-x"})
	got := strings.Join(env, "\n")
	for _, want := range []string{"PATH=/bin", "HOME=/h", "STORY_AUTOMATOR_CHILD=true", "STORY_AUTOMATOR_SESSION=sa-x"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s", want)
		}
	}
	for _, gone := range []string{"CLAUDECODE", "BASH_ENV", "TMUX=", "TMUX_PANE", "CLAUDE_CODE_SESSION_ID", "garbage", "CHILD=false"} {
		if strings.Contains(got, gone) {
			t.Errorf("%s leaked into %q", gone, env)
		}
	}
}
