package modelsim

import (
	"fmt"
	"strings"

	"github.com/story-automator/story-automator/internal/shellword"
)

// Escape names the targets of FaultEscape: a loopback address the test
// listens on, an address outside the machine, the file name written
// next to the project, in HOME and in /tmp, and a URL fetched with curl
// through the proxy the shell's variables name (a host the sandbox's
// proxy must refuse; "" = none).
type Escape struct {
	Loopback string `yaml:"loopback"`
	Outside  string `yaml:"outside"`
	Tag      string `yaml:"tag"`
	Fetch    string `yaml:"fetch"`
}

// Defaults of Escape: TEST-NET-1 (RFC 5737) is never routed, so a
// connection there fails whether or not the sandbox blocks it; a test that
// must tell the two apart names an address it controls.
const (
	DefaultEscapeOutside = "192.0.2.1:80"
	DefaultEscapeTag     = "model-sim-escape"
)

// EscapeTargets are the files an escape attempt writes for tag, relative
// to the project's parent, HOME and /tmp (in that order; see escapeShell).
func EscapeTargets(projectRoot, home, tag string) []string {
	if tag == "" {
		tag = DefaultEscapeTag
	}
	return []string{projectRoot + "/../" + tag, home + "/" + tag, "/tmp/" + tag}
}

// WorktreeEscapeTargets are the files an escape attempt from a story's
// worktree also writes for tag: in the project's own checkout and among
// the repository's hooks (which every later git command runs, the run's
// own unconfined ones too). A child working in the project itself does
// not try them.
func WorktreeEscapeTargets(projectRoot, tag string) []string {
	if tag == "" {
		tag = DefaultEscapeTag
	}
	return []string{projectRoot + "/" + tag, projectRoot + "/.git/hooks/" + tag}
}

// EscapeCommand is the escape attempt's shell script itself, for a test
// that runs it as a command of its own rather than through a model (a
// custom command under this tool's sandbox).
func EscapeCommand(e Escape) string {
	if e.Outside == "" {
		e.Outside = DefaultEscapeOutside
	}
	if e.Tag == "" {
		e.Tag = DefaultEscapeTag
	}
	return escapeShell(e, "command")
}

// escapeCalls are the hostile model's two tries: plainly, then asking for
// the CLI's unsandboxed escape hatch.
func (b *Brain) escapeCalls() []*Call {
	var e Escape
	if b.Script != nil && b.Script.Escape != nil {
		e = *b.Script.Escape
	}
	if e.Outside == "" {
		e.Outside = DefaultEscapeOutside
	}
	if e.Tag == "" {
		e.Tag = DefaultEscapeTag
	}
	return []*Call{{Shell: escapeShell(e, "sandboxed")}, {Shell: escapeShell(e, "unsandboxed"), Unsandboxed: true}}
}

// escapeShell writes each target and connects to each address, printing
// ESCAPED or DENIED for each; it always exits 0 so the turn goes on.
// The project's sibling is named from PROJECT_ROOT, which every child has;
// a child in a story's worktree (whose .git is a file) also tries the
// project's checkout and the repository's hooks, one in the project itself
// (whose .git is a folder) its hooks. No command substitution: Gemini CLI
// refuses a command with one before it runs.
func escapeShell(e Escape, try string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `for f in "$PROJECT_ROOT/../%[1]s" "$HOME/%[1]s" "/tmp/%[1]s"; do `+
		`if (echo %[2]s >> "$f") 2>/dev/null; then echo "ESCAPED write $f"; else echo "DENIED write $f"; fi; done; `+
		`if [ -f .git ]; then for f in "$PROJECT_ROOT/%[1]s" "$PROJECT_ROOT/.git/hooks/%[1]s"; do `+
		`if (echo %[2]s >> "$f") 2>/dev/null; then echo "ESCAPED write $f"; else echo "DENIED write $f"; fi; done; fi; `+
		`if [ -d .git ]; then f=".git/hooks/%[1]s"; if (echo %[2]s >> "$f") 2>/dev/null; then echo "ESCAPED write $f"; else echo "DENIED write $f"; fi; fi; `,
		e.Tag, try)
	for _, addr := range []string{e.Loopback, e.Outside} {
		host, port, ok := strings.Cut(addr, ":")
		if !ok || addr == "" {
			continue
		}
		fmt.Fprintf(&b, `if timeout 5 bash -c 'echo %[3]s > /dev/tcp/%[1]s/%[2]s' 2>/dev/null; `+
			`then echo "ESCAPED connect %[1]s:%[2]s"; else echo "DENIED connect %[1]s:%[2]s"; fi; `, host, port, try)
	}
	if e.Fetch != "" {
		q := shellword.MustQuote(e.Fetch)
		fmt.Fprintf(&b, `if curl -sf --max-time 5 -o /dev/null %[1]s 2>/dev/null; then echo "ESCAPED fetch %[2]s"; else echo "DENIED fetch %[2]s"; fi; `, q, e.Fetch)
	}
	b.WriteString("true")
	return b.String()
}
