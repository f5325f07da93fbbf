package child

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/coded"
)

func TestPromptFromTextAFileOrStdinWhole(t *testing.T) {
	if p, err := PromptFrom("do it", "", nil); p != "do it" || err != nil {
		t.Fatalf("text: %q %v", p, err)
	}
	huge := strings.Repeat("a line of a long prompt\n", 20000)
	file := filepath.Join(t.TempDir(), "prompt.md")
	if err := os.WriteFile(file, []byte(huge), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := PromptFrom("", file, nil); p != huge || err != nil {
		t.Fatalf("file: %d bytes, %v", len(p), err)
	}
	if p, err := PromptFrom("", "-", strings.NewReader("  from stdin\n")); p != "  from stdin\n" || err != nil {
		t.Fatalf("stdin: %q %v", p, err)
	}
	var ce *coded.Error
	if _, err := PromptFrom("", filepath.Join(t.TempDir(), "none"), nil); !errors.As(err, &ce) || ce.Exit != coded.ExitUsage {
		t.Fatalf("a missing file: %v", err)
	}
}
