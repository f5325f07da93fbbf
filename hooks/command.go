package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/shellword"
	"github.com/story-automator/story-automator/stophook"
)

// Hook is the entry install writes: a shell command and its timeout in
// seconds, under the event the provider ends a turn with (see Hook.For).
type Hook struct {
	Command string
	Timeout int
	// Event is the hook event the entry lives under; "" is Stop.
	Event string
	// Millis writes the timeout in milliseconds, the unit Gemini CLI reads.
	Millis bool
	// Flat: the entries sit right under the event, {"type": "command",
	// "bash": CMD, "timeoutSec": N} (Copilot CLI's), not in groups.
	Flat bool
}

// commandKey and timeoutKey are the keys of an entry's command and timeout.
func (h Hook) commandKey() string {
	if h.Flat {
		return "bash"
	}
	return "command"
}

func (h Hook) timeoutKey() string {
	if h.Flat {
		return "timeoutSec"
	}
	return "timeout"
}

// event is the hook event h is registered under.
func (h Hook) event() string {
	if h.Event == "" {
		return EventStop
	}
	return h.Event
}

// timeoutValue is h's timeout in the unit the settings file reads.
func (h Hook) timeoutValue() int {
	if h.Millis {
		return h.Timeout * 1000
	}
	return h.Timeout
}

// timeoutSeconds reads a timeout written in the settings file's unit.
func (h Hook) timeoutSeconds(v int) int {
	if h.Millis {
		return v / 1000
	}
	return v
}

// NewHook builds the entry that runs the Stop hook of exe (made absolute,
// symlinks resolved): `"<dir>/story-automator-hook"` when that sits beside
// it, else `"<exe>" stop-hook` (stophook.Program), quoted so a path with
// spaces or shell characters works.
func NewHook(exe string) (Hook, error) {
	abs, err := filepath.Abs(exe)
	if err != nil {
		return Hook{}, fmt.Errorf("binary path %s: %w", exe, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Hook{}, fmt.Errorf("binary path %s: %w", abs, err)
	}
	argv := stophook.Program(real)
	cmd := strings.Join(append([]string{commandWord(argv[0])}, argv[1:]...), " ")
	return Hook{Command: cmd, Timeout: agent.HookTimeout}, nil
}

// commandWord writes the hook's program path as the settings file shows it
// to people, in double quotes; a path holding a character that double
// quotes leave live goes through the shell quoter instead.
func commandWord(path string) string {
	if strings.ContainsAny(path, "\"\\$`\n\r") {
		return shellword.MustQuote(path)
	}
	return `"` + path + `"`
}

// splitWords splits a hook command into words the way a POSIX shell would,
// each variable left as "$NAME" so a path like "$CLAUDE_PROJECT_DIR"/x reads
// as written. It only recognises entries and runs nothing; a command with
// operators or command substitutions is not ours: no words.
func splitWords(cmd string) []string {
	words, err := shellword.Split(cmd)
	if err != nil {
		return nil
	}
	return words
}

// legacyScripts are the wrapper scripts older installs pointed the Stop hook at.
var legacyScripts = map[string]bool{
	"story-automator-stop-hook.sh": true,
	"story-automator-stop-hook":    true,
}

// OurProgram reports whether a hook command is a story-automator Stop hook
// (the hook's own program, current, older binary path, bare name, a binary
// named story-automator* running stop-hook, or a legacy wrapper script) and
// returns the program path it runs.
func OurProgram(cmd string) (string, bool) {
	words := splitWords(cmd)
	for i, w := range words {
		base := filepath.Base(w)
		if legacyScripts[base] || base == stophook.BinaryName {
			return w, true
		}
		// Any binary named story-automator* (story-automator, story-automator-dev,
		// a versioned copy) running stop-hook is ours.
		if !strings.HasPrefix(base, "story-automator") {
			continue
		}
		for _, later := range words[i+1:] {
			if later == "stop-hook" {
				return w, true
			}
		}
	}
	return "", false
}

// ProgramExists reports whether a hook's program can be found: an absolute or
// relative path is checked on disk, a bare name is searched in getenv("PATH").
func ProgramExists(prog string, getenv func(string) string) bool {
	if prog == "" {
		return false
	}
	if strings.ContainsRune(prog, '/') {
		return isFile(prog)
	}
	for _, dir := range filepath.SplitList(getenv("PATH")) {
		if dir != "" && isFile(filepath.Join(dir, prog)) {
			return true
		}
	}
	return false
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
