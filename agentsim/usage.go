package agentsim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/spend"
)

// turnSeq numbers the turns of this process, so each is its own message.
var turnSeq atomic.Int64

// EnvUsage sets the usage the simulated agent reports for each turn:
// "input=N,output=N,cacheRead=N,cacheWrite=N" (kinds left out are 0).
const EnvUsage = agent.EnvSimUsage

// DefaultTurnUsage is what one turn of the simulated agent reports unless
// EnvUsage or --usage says otherwise. The kinds differ so a test catches one
// read as another.
var DefaultTurnUsage = spend.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 3000, CacheWriteTokens: 100}

// ParseUsage reads "input=N,output=N,cacheRead=N,cacheWrite=N".
func ParseUsage(s string) (spend.Usage, error) {
	var u spend.Usage
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if !ok || err != nil || n < 0 {
			return u, fmt.Errorf("usage %q: want kind=N with N a whole number ≥ 0", part)
		}
		switch strings.TrimSpace(k) {
		case "input":
			u.InputTokens = n
		case "output":
			u.OutputTokens = n
		case "cacheRead":
			u.CacheReadTokens = n
		case "cacheWrite":
			u.CacheWriteTokens = n
		default:
			return u, fmt.Errorf("usage %q: kinds are input, output, cacheRead, cacheWrite", part)
		}
	}
	return u, nil
}

// TranscriptPath is where a simulated agent that is its session's agent
// writes its transcript: beside the session's state file.
func TranscriptPath(stateDir, session string) string {
	return filepath.Join(stateDir, session+".transcript.jsonl")
}

// recordTurn appends one turn's usage to the transcript, in Claude Code's
// transcript format, and names the transcript in the session's state as
// Claude Code's Stop hook does, so a run reads the sim's usage the way it
// reads Claude's. It does so only when the sim is its session's agent
// (--session-agent) or is given a transcript: agent-sim run as a real CLI's
// shell tool spends nothing of its own.
func recordTurn(s *Sim) error {
	o := s.Options
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	path := o.Transcript
	session, dir := getenv(sessionstate.EnvSession), getenv(sessionstate.EnvStateDir)
	if path == "" && o.SessionAgent && session != "" && dir != "" {
		path = TranscriptPath(dir, session)
	}
	if path == "" {
		return nil
	}
	u := DefaultTurnUsage
	if o.Usage != nil {
		u = *o.Usage
	}
	model := s.Model
	if model == "" {
		model = spend.SimModel
	}
	line, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{
		"id": fmt.Sprintf("sim-%d-%d", os.Getpid(), turnSeq.Add(1)), "role": "assistant", "model": model,
		"usage": map[string]int64{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
			"cache_read_input_tokens": u.CacheReadTokens, "cache_creation_input_tokens": u.CacheWriteTokens}}})
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("record usage: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("record usage: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("record usage: %w", err)
	}
	if o.SessionAgent && session != "" && dir != "" {
		return sessionstate.RecordTranscript(dir, session, path)
	}
	return nil
}
