package stophook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxTranscriptTail bounds how much of a transcript's end the hook reads.
const MaxTranscriptTail = 1 << 20

// errNoAssistantText means the transcript's tail holds no assistant text.
var errNoAssistantText = errors.New("no assistant text in the transcript's tail")

// transcriptLine is the part of a transcript line the hook reads: Claude Code
// writes {"type":"assistant","message":{"id","role","content":[{type,text}]}}
// (one content block a line); Codex writes {"payload":{"role","content":[…]}}.
type transcriptLine struct {
	Type    string         `json:"type"`
	Message *transcriptMsg `json:"message"`
	Payload *transcriptMsg `json:"payload"`
}

type transcriptMsg struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// LastAssistantText returns the text of the last assistant message in the
// JSONL transcript at path, reading at most tail bytes from its end. The text
// blocks of that message (Claude Code writes each on its own line, under one
// message id) are joined with newlines.
func LastAssistantText(path string, tail int64) (string, error) {
	// Most last messages sit in the last few KB: try a short tail first, and
	// the full one when the message may have begun before the short tail.
	if tail > firstTail {
		text, complete, err := lastAssistantTextIn(path, firstTail)
		if complete || (err != nil && !errors.Is(err, errNoAssistantText)) {
			return text, err
		}
	}
	text, _, err := lastAssistantTextIn(path, tail)
	return text, err
}

// firstTail is the short tail LastAssistantText reads first.
const firstTail = 64 << 10

// lastAssistantTextIn reads the last tail bytes; complete is false when the
// message found reaches back to the start of what was read (or the read was
// cut), so earlier parts of it may lie before the tail.
func lastAssistantTextIn(path string, tail int64) (text string, complete bool, err error) {
	data, cut, err := readTail(path, tail)
	if err != nil {
		return "", false, err
	}
	lines := bytes.Split(data, []byte("\n"))
	var parts []string
	id := ""
	complete = !cut
	for i := len(lines) - 1; i >= 0; i-- {
		msg := assistantMessage(lines[i])
		if msg == nil {
			if parts != nil && len(bytes.TrimSpace(lines[i])) > 0 {
				complete = true // another entry lies between: the message is whole
				break
			}
			continue
		}
		if parts != nil && (id == "" || msg.ID != id) {
			complete = true
			break
		}
		texts := contentTexts(msg.Content)
		if len(texts) == 0 {
			continue
		}
		if parts == nil {
			id = msg.ID
		}
		parts = append(texts, parts...)
	}
	if parts == nil {
		return "", !cut, errNoAssistantText
	}
	return strings.Join(parts, "\n"), complete, nil
}

// readTail reads at most tail bytes from the end of path, without the first,
// partial line; cut reports that the file is longer than what was read.
func readTail(path string, tail int64) (data []byte, cut bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("stat transcript: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("transcript %s is not a regular file", path)
	}
	off := max(fi.Size()-tail, 0)
	data, err = io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return nil, false, fmt.Errorf("read transcript: %w", err)
	}
	if off > 0 {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return data, off > 0, nil
}

// assistantMessage decodes a transcript line that carries an assistant message.
func assistantMessage(line []byte) *transcriptMsg {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' || !bytes.Contains(line, []byte(`"assistant"`)) {
		return nil
	}
	var tl transcriptLine
	if json.Unmarshal(line, &tl) != nil {
		return nil
	}
	for _, m := range []*transcriptMsg{tl.Message, tl.Payload} {
		if m != nil && m.Role == "assistant" {
			return m
		}
	}
	return nil
}

// contentTexts returns the text blocks of a message's content (a string or a
// list of blocks of type text / output_text).
func contentTexts(raw json.RawMessage) []string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil
		}
		return []string{s}
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	var out []string
	for _, b := range blocks {
		if (b.Type == "text" || b.Type == "output_text") && b.Text != "" {
			out = append(out, b.Text)
		}
	}
	return out
}
