package offline

import (
	"errors"
	"sort"
	"testing"

	"github.com/story-automator/story-automator/internal/coded"
)

// An unknown agent is a usage error; a known one gets its home and variables.
func TestWriteHomeRefusesAnUnknownAgent(t *testing.T) {
	_, err := WriteHome("vim", t.TempDir(), "http://127.0.0.1:1", nil)
	var oe *coded.Error
	if !errors.As(err, &oe) || oe.Code != "usage_error" || oe.Exit != 2 {
		t.Fatalf("unknown agent: %v", err)
	}
	env, err := WriteHome("claude", t.TempDir(), "http://127.0.0.1:1", []string{"."})
	if err != nil || len(env) == 0 {
		t.Fatalf("claude home: %v %v", env, err)
	}
}

// The agents a home can be written for are the ones For knows, sorted.
func TestAgentsAreTheHomeWriters(t *testing.T) {
	agents := Agents()
	if !sort.StringsAreSorted(agents) || len(agents) != 5 {
		t.Fatalf("agents %v", agents)
	}
	for _, a := range agents {
		if _, ok := For(a); !ok {
			t.Fatalf("%s listed but has no home writer", a)
		}
	}
}
