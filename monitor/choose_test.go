package monitor

import (
	"errors"
	"testing"

	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/internal/verify"
	"github.com/story-automator/story-automator/sessionstate"
)

func TestChooseVerifier(t *testing.T) {
	var fe *coded.Error
	if _, err := ChooseVerifier(VerifierChoice{Workflow: "dev", VerifySet: true}); !errors.As(err, &fe) {
		t.Fatalf("--workflow with --verify: %v", err)
	}
	if _, err := ChooseVerifier(VerifierChoice{StoryKeySet: true}); !errors.As(err, &fe) {
		t.Fatalf("--story-key without --workflow: %v", err)
	}
	if _, err := ChooseVerifier(VerifierChoice{Workflow: "dev"}); !errors.Is(err, ErrContract) {
		t.Fatalf("no workflow verifiers: %v", err)
	}
	dir := t.TempDir()
	if _, err := sessionstate.Update(dir, "s1", func(st *sessionstate.State) error { st.Story = "2.3"; return nil }); err != nil {
		t.Fatal(err)
	}
	var asked string
	ch := VerifierChoice{Workflow: "dev", StateDir: dir, Name: "s1", ForWorkflow: func(step, story string) (Verifier, error) {
		asked = step + " " + story
		return verify.Contract("x", nil), nil
	}}
	if v, err := ChooseVerifier(ch); err != nil || v == nil || asked != "dev 2.3" {
		t.Fatalf("recorded story: %v %v %q", v, err, asked)
	}
	if ch.VerifierName() != "workflow:dev" || (VerifierChoice{Verify: "none"}).VerifierName() != "none" {
		t.Fatal("verifier names")
	}
}
