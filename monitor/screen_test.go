package monitor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agent"
)

// Golden screens: done-*.txt are finished Claude Code turns, the others are not.
func TestClaudeHeuristicOnGoldenScreens(t *testing.T) {
	files, err := filepath.Glob("testdata/claude/*.txt")
	if err != nil || len(files) < 6 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.HasPrefix(filepath.Base(f), "done-")
		if got := ClaudeTurnDone(string(b)); got != want {
			t.Errorf("%s: done=%v, want %v", filepath.Base(f), got, want)
		}
	}
}

func TestClaudeTurnSummaryForms(t *testing.T) {
	for line, want := range map[string]bool{
		"✻ Worked for 45s":          true,
		"✻ Sautéed for 1m 12s":      true,
		"✻ Brewed for 10m 0s":       true,
		"✻ Crunched for 1h 2m 3s":   true,
		"  ✻ Baked for 5s  ":        true,
		"tests passed for 3m 10s":   false,
		"✻ tests passed for 3m 10s": false,
		"✻ Working for 45s":         false,
		"✻ Worked for 45 seconds":   false,
		"✻ Cogitating… (38s)":       false,
		// Real Claude Code 2.1.x turn ends carry a tail; a wide pane can put
		// a side panel after it.
		"✻ Crunched for 0s · done 11:17 PM":            true,
		"✻ Worked for 2m 3s · 1 shell still running":   true,
		"✻ Baked for 4s · done 4:23 AM    │ Tasks":     true,
		"✻ Worked for 12s                 │ ◯ Explore": true,
		"✻ Worked for 12sx":                            false,
		"✻ Actualizing… (13m 23s · ↓ 47.5k tokens)":    false,
		"✶ Flibbertigibbeting…":                        false,
	} {
		screen := line + "\n\n│ > │\n"
		if got := ClaudeTurnDone(screen); got != want {
			t.Errorf("%q: %v, want %v", line, got, want)
		}
	}
}

func TestDetectorRegistry(t *testing.T) {
	if DetectorFor(agent.ScreenTurnSummary) == nil || DetectorFor("") != nil || DetectorFor("nope") != nil {
		t.Fatal("registry")
	}
}

func TestIsDoneLine(t *testing.T) {
	for line, want := range map[string]bool{
		"STORY_AUTOMATOR_DONE":            true,
		"  STORY_AUTOMATOR_DONE  ":        true,
		"⏺ STORY_AUTOMATOR_DONE":          true,
		"print STORY_AUTOMATOR_DONE when": false,
		"STORY_AUTOMATOR_DONE.":           false,
		"":                                false,
	} {
		if IsDoneLine(line) != want {
			t.Errorf("%q: want %v", line, want)
		}
	}
}

func TestDoneLineScannerReadsOnlyNewOutput(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.log")
	write := func(s string) int64 {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		return fi.Size()
	}
	d := &doneLineScanner{path: p}
	if n := d.scan(write("working\r\n\x1b[32mSTORY_AUTO")); n != 0 {
		t.Fatalf("partial line counted: %d", n)
	}
	if n := d.scan(write("MATOR_DONE\x1b[0m\r\n")); n != 1 {
		t.Fatalf("split done line: %d", n)
	}
	if n := d.scan(write("spinner\r\x1b[2KSTORY_AUTOMATOR_DONE\r\n")); n != 2 {
		t.Fatalf("overwritten line: %d", n)
	}
	if n := d.scan(write("say STORY_AUTOMATOR_DONE later\n")); n != 2 {
		t.Fatalf("mention counted: %d", n)
	}
}
