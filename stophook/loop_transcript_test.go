package stophook

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLastAssistantTextClaudeTranscript(t *testing.T) {
	got, err := LastAssistantText(filepath.Join("testdata", "transcript-claude.jsonl"), MaxTranscriptTail)
	if err != nil {
		t.Fatal(err)
	}
	if got != "Both packages pass.\n<promise>ALL TESTS GREEN</promise>" {
		t.Fatalf("got %q", got)
	}
	if !ScanControl(got, "ALL TESTS GREEN").Promise {
		t.Error("the promise read from the transcript must count")
	}
}

func TestLastAssistantTextCodexTranscript(t *testing.T) {
	got, err := LastAssistantText(filepath.Join("testdata", "transcript-codex.jsonl"), MaxTranscriptTail)
	if err != nil || got != "The build is fixed.\nFORGE_COMPLETE" {
		t.Fatalf("got %q %v", got, err)
	}
}

func TestLastAssistantTextReadsOnlyTheTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.jsonl")
	early := `{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"early"}]}}` + "\n"
	filler := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", 4000) + `"}}` + "\n"
	if err := os.WriteFile(path, []byte(early+strings.Repeat(filler, 10)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LastAssistantText(path, 8000); !errors.Is(err, errNoAssistantText) {
		t.Fatalf("an assistant line outside the tail was read: %v", err)
	}
	if got, err := LastAssistantText(path, 1<<20); err != nil || got != "early" {
		t.Fatalf("whole file: %q %v", got, err)
	}
}

func TestLastAssistantTextErrors(t *testing.T) {
	if _, err := LastAssistantText(filepath.Join(t.TempDir(), "missing.jsonl"), 1024); err == nil {
		t.Error("a missing transcript must be an error")
	}
	if _, err := LastAssistantText(t.TempDir(), 1024); err == nil {
		t.Error("a directory is not a transcript")
	}
	path := filepath.Join(t.TempDir(), "garbage.jsonl")
	if err := os.WriteFile(path, []byte("not json\n{\"role\":\"assistant\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LastAssistantText(path, 1024); !errors.Is(err, errNoAssistantText) {
		t.Errorf("garbage: %v", err)
	}
}

func TestLastAssistantTextMessageAcrossTheShortTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	user := `{"type":"user","message":{"role":"user","content":"go on"}}` + "\n"
	first := `{"type":"assistant","message":{"id":"m9","role":"assistant","content":[{"type":"text","text":"FIRST ` + strings.Repeat("y", 70<<10) + `"}]}}` + "\n"
	second := `{"type":"assistant","message":{"id":"m9","role":"assistant","content":[{"type":"text","text":"LAST"}]}}` + "\n"
	if err := os.WriteFile(path, []byte(user+first+second), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LastAssistantText(path, MaxTranscriptTail)
	if err != nil || !strings.HasPrefix(got, "FIRST ") || !strings.HasSuffix(got, "\nLAST") {
		t.Fatalf("got %d bytes %q… %v", len(got), clip(got, 20), err)
	}
}
