package completion

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// Zsh gets the bash script behind bashcompinit; an unknown shell is refused
// and nothing is written.
func TestWritePicksTheShellsScript(t *testing.T) {
	app := &cli.App{Name: "story-automator", Commands: []*cli.Command{{Name: "loop"}}}
	var bash, zsh, none bytes.Buffer
	if err := Write(&bash, "bash", app); err != nil {
		t.Fatal(err)
	}
	if err := Write(&zsh, "zsh", app); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(zsh.String(), "#compdef story-automator\n") || !strings.HasSuffix(zsh.String(), bash.String()) {
		t.Fatalf("zsh script:\n%s", zsh.String())
	}
	if err := Write(&none, "tcsh", app); !errors.Is(err, ErrUnknownShell) || none.Len() != 0 {
		t.Fatalf("tcsh: %v %q", err, none.String())
	}
}
