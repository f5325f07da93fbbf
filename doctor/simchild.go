package doctor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/story-automator/story-automator/modelsim/cmdline"
)

// simChild is a model-sim serving an offline rehearsal: its own program
// (beside story-automator) as a child process, so that doctor does not link
// the server.
type simChild struct {
	cmd    *exec.Cmd
	url    string
	record string
}

// startModelSim starts the model-sim beside exe with script, recording its
// exchanges in dir, and waits for it to announce its URL.
func startModelSim(exe, script, dir string) (*simChild, error) {
	prog, err := cmdline.Program(exe)
	if err != nil {
		return nil, err
	}
	scriptFile := filepath.Join(dir, "script.yaml")
	if err := os.WriteFile(scriptFile, []byte(script), 0o600); err != nil {
		return nil, fmt.Errorf("write model-sim's script: %w", err)
	}
	s := &simChild{record: filepath.Join(dir, "exchanges.jsonl")}
	s.cmd = exec.Command(prog, "model-sim", "--json", "--script", scriptFile, "--record", s.record)
	var stderr bytes.Buffer
	s.cmd.Stderr = &stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", prog, err)
	}
	var first struct {
		OK  bool   `json:"ok"`
		URL string `json:"url"`
	}
	type announcement struct {
		line []byte
		err  error
	}
	said := make(chan announcement, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadBytes('\n')
		said <- announcement{line, err}
	}()
	var a announcement
	select {
	case a = <-said:
	case <-time.After(announceWait):
		a.err = fmt.Errorf("nothing within %s", announceWait)
		_ = s.cmd.Process.Kill()
	}
	if a.err != nil || json.Unmarshal(a.line, &first) != nil || !first.OK || first.URL == "" {
		s.Close()
		return nil, fmt.Errorf("model-sim did not announce its URL: %s %s", bytes.TrimSpace(a.line), bytes.TrimSpace(stderr.Bytes()))
	}
	s.url = first.URL
	return s, nil
}

// announceWait bounds how long model-sim may take to print its URL.
const announceWait = 10 * time.Second

// Close stops model-sim and waits for it.
func (s *simChild) Close() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
}

// received reports whether model-sim answered a main (not side) request
// whose body holds text, from its record.
func (s *simChild) received(text string) bool {
	data, err := os.ReadFile(s.record)
	if err != nil {
		return false
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e struct {
			Side    bool            `json:"side"`
			Request json.RawMessage `json:"request"`
		}
		if json.Unmarshal(line, &e) == nil && !e.Side && strings.Contains(string(e.Request), text) {
			return true
		}
	}
	return false
}
