package spend

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Reading is the usage an agent's own record holds for one session.
type Reading struct {
	Usage Usage
	// Model is the model the record names (the last one, if several).
	Model string
}

// ErrNoUsage means the record holds no usage at all.
var ErrNoUsage = errors.New("the agent's record holds no usage")

// maxLine bounds one JSONL line: a transcript line carrying a whole file read
// can be large, but never this large.
const maxLine = 64 << 20

// eachLine calls fn with every non-empty line of the JSONL file at path.
func eachLine(path string, fn func([]byte)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: read the rest of it whole.
			rest, rerr := readRest(r, line)
			line, err = rest, rerr
		}
		if len(line) > 1 {
			fn(line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
}

func readRest(r *bufio.Reader, first []byte) ([]byte, error) {
	buf := append([]byte(nil), first...)
	for {
		part, err := r.ReadSlice('\n')
		buf = append(buf, part...)
		if len(buf) > maxLine {
			return nil, fmt.Errorf("line longer than %d bytes", maxLine)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, err
		}
	}
}

// ReadClaudeTranscript sums the usage of Claude Code's session transcript
// (~/.claude/projects/<dir>/<session>.jsonl, named by the Stop hook's
// transcript_path). Each assistant message carries the API's usage;
// Claude Code writes one line per content block of a message, all with the
// same message id, so a message counts once, with its last line's figures.
// input_tokens there excludes the cached input, as the API reports it.
func ReadClaudeTranscript(path string) (Reading, error) {
	type usage struct {
		Input      int64 `json:"input_tokens"`
		Output     int64 `json:"output_tokens"`
		CacheRead  int64 `json:"cache_read_input_tokens"`
		CacheWrite int64 `json:"cache_creation_input_tokens"`
	}
	var line struct {
		Type    string `json:"type"`
		Message struct {
			ID    string `json:"id"`
			Model string `json:"model"`
			Usage *usage `json:"usage"`
		} `json:"message"`
	}
	byID := map[string]usage{}
	var order []string
	var model string
	err := eachLine(path, func(b []byte) {
		line.Type, line.Message.ID, line.Message.Model, line.Message.Usage = "", "", "", nil
		if json.Unmarshal(b, &line) != nil || line.Type != "assistant" || line.Message.Usage == nil {
			return
		}
		id := line.Message.ID
		if id == "" {
			id = fmt.Sprintf("line-%d", len(order))
		}
		if _, seen := byID[id]; !seen {
			order = append(order, id)
		}
		byID[id] = *line.Message.Usage
		// "<synthetic>" marks messages Claude Code wrote itself (an API error shown as text).
		if m := line.Message.Model; m != "" && m != "<synthetic>" {
			model = m
		}
	})
	if err != nil {
		return Reading{}, err
	}
	if len(order) == 0 {
		return Reading{}, ErrNoUsage
	}
	var r Reading
	for _, id := range order {
		u := byID[id]
		r.Usage.add(Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite})
	}
	r.Model = model
	return r, nil
}

// codexUsage is Codex's token usage: input_tokens includes the cached and
// cache-written input, output_tokens the reasoning.
type codexUsage struct {
	Input      int64 `json:"input_tokens"`
	Cached     int64 `json:"cached_input_tokens"`
	CacheWrite int64 `json:"cache_write_input_tokens"`
	Output     int64 `json:"output_tokens"`
}

func (c codexUsage) usage() Usage {
	return Usage{InputTokens: max(c.Input-c.Cached-c.CacheWrite, 0), OutputTokens: c.Output,
		CacheReadTokens: c.Cached, CacheWriteTokens: c.CacheWrite}
}

// ReadCodexRollout reads Codex's session log
// (<state dir>/sessions/YYYY/MM/DD/rollout-*.jsonl): its last token_count
// event holds the session's running total, its turn_context the model.
func ReadCodexRollout(path string) (Reading, error) {
	var line struct {
		Type    string `json:"type"`
		Payload struct {
			Type  string `json:"type"`
			Model string `json:"model"`
			Info  *struct {
				Total *codexUsage `json:"total_token_usage"`
			} `json:"info"`
		} `json:"payload"`
	}
	var r Reading
	found := false
	err := eachLine(path, func(b []byte) {
		line.Type, line.Payload.Type, line.Payload.Model, line.Payload.Info = "", "", "", nil
		if json.Unmarshal(b, &line) != nil {
			return
		}
		switch {
		case line.Type == "turn_context" && line.Payload.Model != "":
			r.Model = line.Payload.Model
		case line.Type == "event_msg" && line.Payload.Type == "token_count" && line.Payload.Info != nil && line.Payload.Info.Total != nil:
			r.Usage, found = line.Payload.Info.Total.usage(), true
		}
	})
	if err != nil {
		return Reading{}, err
	}
	if !found {
		return r, ErrNoUsage
	}
	return r, nil
}

// chatModelTurn is the type of a model's message in a chat session record.
const chatModelTurn = "gemini" // a record's value, not an agent name

// ReadGeminiSession reads Gemini CLI's session record
// (~/.gemini/tmp/<project>/chats/session-*.jsonl): one line per message,
// rewritten under the same id as the message grows, so each message counts
// once with its last figures. "input" includes the cached input; thoughts
// are billed as output, tool-use prompt tokens as input.
func ReadGeminiSession(path string) (Reading, error) {
	type tokens struct {
		Input, Output, Cached, Thoughts, Tool int64
	}
	var line struct {
		ID     string  `json:"id"`
		Type   string  `json:"type"`
		Model  string  `json:"model"`
		Tokens *tokens `json:"tokens"`
	}
	byID := map[string]tokens{}
	var order []string
	var model string
	err := eachLine(path, func(b []byte) {
		line.ID, line.Type, line.Model, line.Tokens = "", "", "", nil
		if json.Unmarshal(b, &line) != nil || line.Type != chatModelTurn || line.Tokens == nil {
			return
		}
		if _, seen := byID[line.ID]; !seen {
			order = append(order, line.ID)
		}
		byID[line.ID] = *line.Tokens
		if line.Model != "" {
			model = line.Model
		}
	})
	if err != nil {
		return Reading{}, err
	}
	if len(order) == 0 {
		return Reading{}, ErrNoUsage
	}
	r := Reading{Model: model}
	for _, id := range order {
		t := byID[id]
		r.Usage.add(Usage{InputTokens: max(t.Input-t.Cached, 0) + t.Tool, OutputTokens: t.Output + t.Thoughts, CacheReadTokens: t.Cached})
	}
	return r, nil
}

// ReadCopilotEvents reads Copilot CLI's session event log
// (~/.copilot/session-state/<id>/events.jsonl): one session.usage_record
// per model request. Its inputTokens include the cached and cache-written
// input; outputTokens the reasoning.
func ReadCopilotEvents(path string) (Reading, error) {
	type usage struct {
		Model      string `json:"model"`
		Input      int64  `json:"inputTokens"`
		Output     int64  `json:"outputTokens"`
		CacheRead  int64  `json:"cacheReadTokens"`
		CacheWrite int64  `json:"cacheWriteTokens"`
	}
	var line struct {
		Type string `json:"type"`
		Data struct {
			Usage *usage `json:"usage"`
		} `json:"data"`
	}
	var r Reading
	found := false
	err := eachLine(path, func(b []byte) {
		line.Type, line.Data.Usage = "", nil
		if json.Unmarshal(b, &line) != nil || line.Type != "session.usage_record" || line.Data.Usage == nil {
			return
		}
		u := *line.Data.Usage
		r.Usage.add(Usage{InputTokens: max(u.Input-u.CacheRead-u.CacheWrite, 0), OutputTokens: u.Output,
			CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite})
		if u.Model != "" {
			r.Model = u.Model
		}
		found = true
	})
	if err != nil {
		return Reading{}, err
	}
	if !found {
		return Reading{}, ErrNoUsage
	}
	return r, nil
}
