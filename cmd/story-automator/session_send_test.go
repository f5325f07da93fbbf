package main

import "testing"

func TestPasteArrivedNeedsAChangeThePasteExplains(t *testing.T) {
	prompt := "╭──────╮\n│ >    │\n╰──────╯\n"
	for _, tc := range []struct {
		what, before, after, text string
		want                      bool
	}{
		{"echoed into the input box", prompt, "╭──────╮\n│ > fix the bug │\n╰──────╯\n", "fix the bug", true},
		{"already on screen, nothing new", "fix the bug\n$ ", "fix the bug\n$ ", "fix the bug", false},
		{"short text already visible", "y/n? y\n", "y/n? y\n", "y", false},
		{"short text typed again", "y/n? y\n", "y/n? y\ny\n", "y", true},
		{"screen moved but not by the paste", "working\n", "working\nstill working\n", "fix the bug", false},
		{"long text wrapped by the pane", "", "…and finally run\nthe tests again\n", "a long request…\nand finally run the tests again", true},
		{"collapsed paste placeholder", prompt, "│ > [Pasted text #1 +40 lines] │\n", "line\nline\nline", true},
		{"old placeholder only", "│ > [Pasted text #1 +40 lines] │\n", "│ > [Pasted text #1 +40 lines] │\n", "other\ntext", false},
		{"blank text that changed the screen", "$ ", "$ \n$ ", "\n", true},
		{"blank text with no change", "$ ", "$ ", "\n", false},
	} {
		if got := pasteArrived(tc.before, tc.after, tc.text); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.what, got, tc.want)
		}
	}
}
