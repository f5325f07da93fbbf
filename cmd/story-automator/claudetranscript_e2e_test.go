package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// claudeTranscriptWith is the Claude Code transcript under home (a session
// file in ~/.claude/projects) that holds text, "" while there is none.
func claudeTranscriptWith(home, text string) string {
	files, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "*.jsonl"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), text) {
			return f
		}
	}
	return ""
}

// stopHookRanAfter reports whether the transcript records a Stop-hook run
// (its stop_hook_summary line, written once the hooks have returned) after
// the last line that holds text: the positive signal that a stop's hook is
// done, after which whatever it would have written is on disk.
func stopHookRanAfter(transcript, text string) bool {
	f, err := os.Open(transcript)
	if err != nil {
		return false
	}
	defer f.Close()
	seen, ran := false, false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.Contains(line, text):
			seen, ran = true, false
		case seen && strings.Contains(line, `"stop_hook_summary"`):
			ran = true
		}
	}
	return ran
}
