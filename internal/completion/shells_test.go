package completion

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// A command line typed so far (the last word is the one being completed)
// and what completing it must offer.
var cases = []struct {
	line string
	want []string
}{
	{"hooks status --", []string{"--json"}},
	{"status --", []string{"--json", "--watch"}},
	{"loop status --", []string{"--json"}},
	{"session status --", []string{"--json", "--lines"}},
	{"session status -", []string{"--json", "--lines", "-n"}},
	{"--project-root /tmp/p hooks status --", []string{"--json"}},
	{"hooks install --scope user --", []string{"--scope"}},
	{"--", []string{"--project-root"}},
	{"loop st", []string{"start", "status"}},
	{"st", []string{"status"}},
	{"hooks ", []string{"install", "status"}},
}

// Each shell loads the script without a word on stderr and completes every
// case with exactly the flags and commands of the command path typed, not
// those of another command of the same name. A shell that is not installed
// is skipped, except in CI (CI=true), which installs bash, zsh and fish.
func TestShellsCompleteTheTypedCommandPath(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(shell); err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("%s is not installed: .ci/run installs it", shell)
				}
				t.Skipf("%s is not installed", shell)
			}
			var script bytes.Buffer
			if err := Write(&script, shell, fixtureApp()); err != nil {
				t.Fatal(err)
			}
			lines := make([]string, len(cases))
			for i, c := range cases {
				lines[i] = c.line
			}
			for i, got := range complete(t, shell, script.Bytes(), lines) {
				if !reflect.DeepEqual(got, cases[i].want) {
					t.Errorf("%s: %q offers %q, want %q", shell, cases[i].line, got, cases[i].want)
				}
			}
		})
	}
}

// complete loads the script into one fresh shell with no user configuration
// and a private HOME, and returns the sorted words it offers for each line.
func complete(t *testing.T, shell string, script []byte, lines []string) [][]string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "story-automator."+shell)
	if err := os.WriteFile(file, script, 0o644); err != nil {
		t.Fatal(err)
	}
	prog := map[string]string{
		"bash": `source "$1" || exit 1
c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _story_automator; printf '%s\n' "${COMPREPLY[@]}" "=="; }
`,
		// The path zsh takes on Tab: bashcompinit's _bash_complete calls
		// compgen -F, which calls the bash function under sh emulation.
		"zsh": `autoload -U compinit && compinit -u -D && source "$1" || exit 1
[[ $_comps[story-automator] == "_bash_complete -o default -F _story_automator" ]] || { print -u2 "not registered: $_comps[story-automator]"; exit 1; }
c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); compgen -F _story_automator -- "${@[-1]}"; print "=="; }
`,
		"fish": `source $argv[1]; or exit 1
`,
	}[shell]
	var curs []string
	for _, line := range lines {
		words := append([]string{"story-automator"}, strings.Fields(line)...)
		if strings.HasSuffix(line, " ") {
			words = append(words, "")
		}
		curs = append(curs, words[len(words)-1])
		if shell == "fish" {
			prog += "complete -C " + fishQuote(strings.Join(words, " ")) + "; echo ==\n"
			continue
		}
		for i := range words {
			words[i] = fishQuote(words[i]) // words have no ' or \: sh quoting alike
		}
		prog += "c " + strings.Join(words, " ") + "\n"
	}
	var cmd *exec.Cmd
	switch shell {
	case "bash":
		cmd = exec.Command("bash", "--norc", "--noprofile", "-c", prog, "bash", file)
	case "zsh":
		cmd = exec.Command("zsh", "-f", "-c", prog, "zsh", file)
	case "fish":
		cmd = exec.Command("fish", "--no-config", "-c", prog, file)
	}
	cmd.Env = []string{"HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "XDG_DATA_HOME=" + dir, "XDG_CACHE_HOME=" + dir,
		"ZDOTDIR=" + dir, "PATH=" + os.Getenv("PATH"), "TERM=dumb"}
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("%s: %v\n%s", shell, err, stderr.String())
	}
	out := make([][]string, 0, len(lines))
	var got []string
	for _, l := range strings.Split(stdout.String(), "\n") {
		word, _, _ := strings.Cut(l, "\t") // fish: word<TAB>description
		switch {
		case word == "==":
			sort.Strings(got)
			out, got = append(out, got), nil
		// zsh's compgen offers every word and lets zsh match; match here.
		case word != "" && len(out) < len(curs) && strings.HasPrefix(word, curs[len(out)]):
			got = append(got, word)
		}
	}
	if len(out) != len(lines) {
		t.Fatalf("%s answered %d of %d lines:\n%s", shell, len(out), len(lines), stdout.String())
	}
	return out
}
