package agentsim

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/spend"
)

func TestSessionAgentRecordsEachTurnsUsageWhereTheRunReadsIt(t *testing.T) {
	dir := t.TempDir()
	name := "sa-p-ab12-e1-s1-1-dev-x9z8"
	if _, err := sessionstate.Update(dir, name, func(*sessionstate.State) error { return nil }); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{sessionstate.EnvSession: name, sessionstate.EnvStateDir: dir, EnvUsage: "input=7,output=3,cacheRead=5,cacheWrite=1"}
	o, err := OptionsFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	o.Behaviour, o.SessionAgent = "finish", true
	for i := 0; i < 2; i++ {
		s, _ := newSim(t, o, "p")
		s.Getenv, s.Model = func(k string) string { return env[k] }, "m1"
		if code := Run(context.Background(), s); code != 0 {
			t.Fatalf("exit %d", code)
		}
	}
	st, err := sessionstate.Read(dir, name)
	if err != nil || st.Transcript != TranscriptPath(dir, name) {
		t.Fatalf("session names transcript %q (%v)", st.Transcript, err)
	}
	r, err := spend.ReadClaudeTranscript(st.Transcript)
	want := spend.Usage{InputTokens: 14, OutputTokens: 6, CacheReadTokens: 10, CacheWriteTokens: 2}
	if err != nil || r.Usage != want || r.Model != "m1" {
		t.Errorf("read %+v %q %v, want %+v m1", r.Usage, r.Model, err, want)
	}
}

func TestSimAsAShellToolRecordsNothing(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{sessionstate.EnvSession: "sa-x", sessionstate.EnvStateDir: dir}
	s, _ := newSim(t, Options{Behaviour: "finish"}, "p")
	s.Getenv = func(k string) string { return env[k] }
	if code := Run(context.Background(), s); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(TranscriptPath(dir, "sa-x")); !os.IsNotExist(err) {
		t.Errorf("a sim that is not the session's agent wrote a transcript: %v", err)
	}
}

func TestDefaultUsageAndModelWithAGivenTranscript(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	s, _ := newSim(t, Options{Behaviour: "finish", Transcript: p}, "p")
	if code := Run(context.Background(), s); code != 0 {
		t.Fatalf("exit %d", code)
	}
	r, err := spend.ReadClaudeTranscript(p)
	if err != nil || r.Usage != DefaultTurnUsage || r.Model != spend.SimModel {
		t.Errorf("read %+v %q %v", r.Usage, r.Model, err)
	}
	if _, err := ParseUsage("input=x"); err == nil {
		t.Error("a bad usage parsed")
	}
	if _, err := ParseUsage("tokens=3"); err == nil {
		t.Error("an unknown kind parsed")
	}
}
