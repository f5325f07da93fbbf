package spend

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/story-automator/story-automator/agent"
)

// Session is what a reader knows of one child session to find its record.
type Session struct {
	// Transcript is the record's path when the child said it (its Stop or
	// AfterAgent hook's transcript_path); "" = look for it.
	Transcript string
	// StateDir is the agent's state directory in the child's environment
	// (its profile's StateHome), where a reader looks for the record.
	StateDir string
	// Dir is the child's working directory (the project root).
	Dir string
	// Since is when the session started: older records are another session's.
	Since time.Time
}

// ErrNoRecord means the agent's record of the session was not found.
var ErrNoRecord = errors.New("no record of the session found")

// Read reads a session's usage from its record, kept in format src (an
// agent profile names its format, so a new agent needs a reader here only
// for a new format).
func Read(src agent.UsageFormat, s Session) (Reading, error) {
	path := s.Transcript
	var err error
	switch src {
	case agent.UsageAnthropicJSONL:
		if path == "" {
			return Reading{}, fmt.Errorf("%w: the child's Stop hook named no transcript", ErrNoRecord)
		}
		return ReadClaudeTranscript(path)
	case agent.UsageRolloutJSONL:
		if path == "" {
			path, err = findCodexRollout(s)
		}
		if err != nil {
			return Reading{}, err
		}
		return ReadCodexRollout(path)
	case agent.UsageChatSessionJSONL:
		if path == "" {
			path, err = findGeminiSession(s)
		}
		if err != nil {
			return Reading{}, err
		}
		return ReadGeminiSession(path)
	case agent.UsageEventsJSONL:
		if path == "" {
			path, err = findCopilotEvents(s)
		}
		if err != nil {
			return Reading{}, err
		}
		return ReadCopilotEvents(path)
	case agent.UsageOpenCodeDB:
		return openCodeSession(s)
	case "":
		return Reading{}, errors.New("the agent reports no usage the tool can read")
	}
	return Reading{}, fmt.Errorf("unknown usage source %q", src)
}

// candidates lists files matching glob modified since t, newest first.
func candidates(glob string, since time.Time) []string {
	paths, _ := filepath.Glob(glob)
	type file struct {
		path string
		mod  time.Time
	}
	var out []file
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err == nil && fi.Mode().IsRegular() && !fi.ModTime().Before(since.Add(-time.Second)) {
			out = append(out, file{p, fi.ModTime()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].mod.After(out[j].mod) })
	names := make([]string, len(out))
	for i, f := range out {
		names[i] = f.path
	}
	return names
}

// firstLine decodes a JSONL file's first line into v.
func firstLine(path string, v any) bool {
	ok := false
	stop := errors.New("stop")
	_ = eachLineUntil(path, func(b []byte) error {
		ok = json.Unmarshal(b, v) == nil
		return stop
	})
	return ok
}

func eachLineUntil(path string, fn func([]byte) error) error {
	var ferr error
	err := eachLine(path, func(b []byte) {
		if ferr == nil {
			ferr = fn(b)
		}
	})
	if err != nil {
		return err
	}
	return ferr
}

// findCodexRollout finds the session log a rollout-writing CLI (Codex) started in the child's
// directory after the session began (its session_meta names the cwd).
func findCodexRollout(s Session) (string, error) {
	home := s.StateDir
	// Logs are filed by the local date the session began; a session that
	// crosses midnight is still under its start date.
	for _, p := range candidates(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*.jsonl"), s.Since) {
		var meta struct {
			Type    string `json:"type"`
			Payload struct {
				Cwd       string `json:"cwd"`
				Timestamp string `json:"timestamp"`
			} `json:"payload"`
		}
		if !firstLine(p, &meta) || meta.Type != "session_meta" || !sameDir(meta.Payload.Cwd, s.Dir) {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, meta.Payload.Timestamp); err == nil && t.Before(s.Since.Add(-time.Second)) {
			continue
		}
		return p, nil
	}
	return "", fmt.Errorf("%w: no Codex session log for %s under %s/sessions", ErrNoRecord, s.Dir, home)
}

// findGeminiSession finds the chat session record (Gemini CLI's) begun in
// the child's directory after the session started: projects.json in the
// state directory names the directory's folder under tmp.
func findGeminiSession(s Session) (string, error) {
	root := s.StateDir
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	data, err := os.ReadFile(filepath.Join(root, "projects.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	folder := ""
	if json.Unmarshal(data, &reg) == nil {
		for dir, f := range reg.Projects {
			if sameDir(dir, s.Dir) {
				folder = f
			}
		}
	}
	if folder == "" {
		return "", fmt.Errorf("%w: %s does not list %s", ErrNoRecord, filepath.Join(root, "projects.json"), s.Dir)
	}
	for _, p := range candidates(filepath.Join(root, "tmp", folder, "chats", "session-*.jsonl"), s.Since) {
		var head struct {
			StartTime string `json:"startTime"`
		}
		if !firstLine(p, &head) {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, head.StartTime); err == nil && t.Before(s.Since.Add(-time.Second)) {
			continue
		}
		return p, nil
	}
	return "", fmt.Errorf("%w: no Gemini session record under %s", ErrNoRecord, filepath.Join(root, "tmp", folder, "chats"))
}

// findCopilotEvents finds the event log (Copilot CLI's) of a session begun
// in the child's directory after the session started:
// session-state/<id>/events.jsonl under the state directory, whose first
// line, session.start, names the cwd and the start time.
func findCopilotEvents(s Session) (string, error) {
	for _, p := range candidates(filepath.Join(s.StateDir, "session-state", "*", "events.jsonl"), s.Since) {
		var head struct {
			Type string `json:"type"`
			Data struct {
				StartTime string `json:"startTime"`
				Context   struct {
					Cwd string `json:"cwd"`
				} `json:"context"`
			} `json:"data"`
		}
		if !firstLine(p, &head) || head.Type != "session.start" || !sameDir(head.Data.Context.Cwd, s.Dir) {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, head.Data.StartTime); err == nil && t.Before(s.Since.Add(-time.Second)) {
			continue
		}
		return p, nil
	}
	return "", fmt.Errorf("%w: no Copilot session log for %s under %s", ErrNoRecord, s.Dir, filepath.Join(s.StateDir, "session-state"))
}

// sameDir compares two directories, symlinks resolved.
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}
