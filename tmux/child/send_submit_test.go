package child

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/tmux"
)

// On real Gemini CLI 0.61 screens (testdata/submit: the box before the
// paste, with the paste, after an Enter taken as a newline, and just after
// a submit while the turn runs) the check tells each apart, for the long
// paste shown as a placeholder and the short one shown as text.
func TestSubmitCheckOnRealGeminiScreens(t *testing.T) {
	read := func(name string) string { return readTestdata(t, "submit", name) }
	for _, kind := range []string{"long", "short"} {
		text := read(kind + ".txt")
		screen := func(s string) string { return read("gemini-0.61.0-" + kind + "-" + s + ".txt") }
		for _, profile := range []string{agent.AgentGemini, agent.AgentCustom} {
			c := newSubmitCheck(screen("before"), screen("pasted"), text, agent.PasteOf(profile))
			if !c.canTell() {
				t.Fatalf("%s/%s: cannot tell a submit on Gemini's screen", kind, profile)
			}
			for _, tc := range []struct {
				screen string
				state  submitState
			}{{"pasted", submitPending}, {"newline", submitNewline}, {"submitted", submitDone}} {
				if state := c.judge(screen(tc.screen)); state != tc.state {
					t.Errorf("%s/%s: %s screen judged %v, want %v", kind, profile, tc.screen, state, tc.state)
				}
			}
		}
		if c := newSubmitCheck(screen("before"), screen("pasted"), text, agent.PasteOf(agent.AgentClaude)); c.canTell() {
			t.Errorf("%s: Claude's profile claims to tell a submit on Gemini's screen", kind)
		}
	}
}

func TestPasteEndLine(t *testing.T) {
	ph := []string{"[Pasted Text:"}
	for _, tc := range []struct{ what, screen, text, want string }{
		{"placeholder", " * [Pasted Text: 12 lines]\n\n footer\n", "a\nb", "* [Pasted Text: 12 lines]"},
		{"last wrapped line of the text", " * fix the\n   bug now\n\n footer\n", "fix the bug now", "bug now"},
		{"the last of several", "   the end\n ✦ ok\n * the end\n\n footer\n", "the end", "* the end"},
		{"a short text whole", " > y\n\n", "y", "> y"},
		{"too little of the text", " y\n footer\n", "xy", ""},
		{"nothing of it", " footer\n", "fix the bug", ""},
	} {
		if got := pasteEndLine(tc.screen, tc.text, ph); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.what, got, tc.want)
		}
	}
}

// fakeInputBox is a tmux whose one pane acts out an input box like Gemini
// CLI's: a paste replaces the empty box's hint, and each Enter does what
// enters says next (submit, newline, ignore, or flicker: ignore it, but
// show one frame half drawn that looks like a newline); Backspace takes
// back a newline, or deletes a character of the text, which spoils it.
type fakeInputBox struct {
	mu                sync.Mutex
	enters            []string
	pasted, submitted bool
	newlines, flicker int
	spoiled           bool
	keys              []string
	// lateBlank: the box draws one more blank line under the paste after
	// the first frame that shows it, before any Enter.
	lateBlank, lateDrawn bool
	// eatsChar: a Backspace deletes the text's last character even when a
	// newline is there to take back.
	eatsChar bool
}

const fakeHint = "Type your message or @path/to/file"

func (f *fakeInputBox) screen() string {
	box := " *   " + fakeHint + "\n"
	switch {
	case f.submitted:
		box = " > fix the bug\n\n" + box
	case f.pasted && f.spoiled:
		box = " * fix the bu\n" + strings.Repeat("\n", f.newlines)
	case f.pasted:
		box = " * fix the bug\n" + strings.Repeat("\n", f.newlines)
	}
	return " ✦ Hello.\n\n" + box + "\n workspace (/directory)\n"
}

func (f *fakeInputBox) handle(c tmux.FakeCall) tmux.FakeResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case has(c.Args, "capture-pane"):
		if f.lateBlank && f.pasted && !f.lateDrawn {
			f.lateDrawn = true
			defer func() { f.newlines++ }()
		}
		if f.flicker > 0 {
			f.flicker--
			f.newlines++
			defer func() { f.newlines-- }()
		}
		return tmux.FakeResult{Stdout: f.screen()}
	case has(c.Args, "paste-buffer"):
		f.pasted = true
	case has(c.Args, "send-keys"):
		key := c.Args[len(c.Args)-1]
		f.keys = append(f.keys, key)
		f.press(key)
	}
	return tmux.FakeResult{}
}

func (f *fakeInputBox) press(key string) {
	switch {
	case key == "BSpace" && f.eatsChar:
		f.spoiled = true
	case key == "BSpace" && f.newlines > 0:
		f.newlines--
	case key == "BSpace":
		f.spoiled = true
	case key == "Enter" && len(f.enters) > 0:
		next := f.enters[0]
		f.enters = f.enters[1:]
		switch next {
		case "newline":
			f.newlines++
		case "flicker":
			f.flicker = 1
		}
		f.submitted = next == "submit"
	case key == "Enter":
		f.submitted = true
	}
}

func has(args []string, s string) bool {
	for _, a := range args {
		if a == s {
			return true
		}
	}
	return false
}

func sendToFake(t *testing.T, f *fakeInputBox) error {
	t.Helper()
	tc := &tmux.Client{Exec: &tmux.FakeExecutor{Handle: f.handle}, Socket: "t"}
	return Send(context.Background(), tc, t.TempDir(), "sa-send-test", "fix the bug", true, time.Now, func(err error) { t.Error(err) })
}

func TestSendMakesSureTheEnterSubmitted(t *testing.T) {
	for _, tc := range []struct {
		what   string
		enters []string
		keys   []string
	}{
		{"submitted at once", []string{"submit"}, []string{"Enter"}},
		{"taken as a newline, then submitted", []string{"newline", "submit"}, []string{"Enter", "BSpace", "Enter"}},
		{"ignored, then submitted", []string{"ignore", "submit"}, []string{"Enter", "Enter"}},
		{"twice a newline", []string{"newline", "newline", "submit"}, []string{"Enter", "BSpace", "Enter", "BSpace", "Enter"}},
		{"a half-drawn frame is no newline", []string{"flicker", "submit"}, []string{"Enter", "Enter"}},
	} {
		f := &fakeInputBox{enters: tc.enters}
		if tc.enters[0] == "ignore" || tc.enters[0] == "flicker" {
			shortSubmitWait(t)
		}
		if err := sendToFake(t, f); err != nil {
			t.Errorf("%s: %v", tc.what, err)
		}
		if !reflect.DeepEqual(f.keys, tc.keys) || !f.submitted || f.spoiled {
			t.Errorf("%s: keys %v, submitted %v, spoiled %v; want keys %v, submitted", tc.what, f.keys, f.submitted, f.spoiled, tc.keys)
		}
	}
}

// A blank line the box draws under the paste once it has settled, before
// any Enter, is how it draws the paste, not a newline: no Backspace.
func TestSendTakesNoBlankLineBeforeAnyEnterForANewline(t *testing.T) {
	f := &fakeInputBox{enters: []string{"submit"}, lateBlank: true}
	if err := sendToFake(t, f); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.keys, []string{"Enter"}) || f.spoiled {
		t.Errorf("keys %v, spoiled %v; want one Enter", f.keys, f.spoiled)
	}
}

// A Backspace that took a character of the text instead of the newline
// fails the send: the changed text is never submitted.
func TestSendNeverSubmitsATextABackspaceChanged(t *testing.T) {
	shortSubmitWait(t)
	f := &fakeInputBox{enters: []string{"newline", "submit"}, eatsChar: true}
	if err := sendToFake(t, f); !errors.Is(err, ErrSubmitUnverified) {
		t.Fatalf("err %v, want ErrSubmitUnverified", err)
	}
	if !reflect.DeepEqual(f.keys, []string{"Enter", "BSpace"}) || f.submitted {
		t.Errorf("keys %v, submitted %v; want Enter, BSpace and no submit", f.keys, f.submitted)
	}
}

func TestSendGivesUpOnAnEnterThatNeverSubmits(t *testing.T) {
	shortSubmitWait(t)
	for _, enters := range [][]string{{"newline", "newline", "newline"}, {"ignore", "ignore", "ignore"}} {
		f := &fakeInputBox{enters: enters}
		if err := sendToFake(t, f); !errors.Is(err, ErrSubmitUnverified) {
			t.Errorf("%v: %v, want ErrSubmitUnverified", enters, err)
		}
		if n := strings.Count(strings.Join(f.keys, " "), "Enter"); n != SendSubmitAttempts || f.spoiled {
			t.Errorf("%v: %d Enters (want %d), spoiled %v", enters, n, SendSubmitAttempts, f.spoiled)
		}
	}
}

// A pane whose box showed no known hint before the paste cannot show a
// submit: send presses Enter once and does not wait for one.
func TestSendWithoutAHintPressesEnterOnce(t *testing.T) {
	f := &fakeInputBox{enters: []string{"newline"}}
	tc := &tmux.Client{Exec: &tmux.FakeExecutor{Handle: func(c tmux.FakeCall) tmux.FakeResult {
		r := f.handle(c)
		r.Stdout = strings.ReplaceAll(r.Stdout, fakeHint, "")
		return r
	}}, Socket: "t"}
	if err := Send(context.Background(), tc, t.TempDir(), "sa-send-test", "fix the bug", true, time.Now, func(err error) { t.Error(err) }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.keys, []string{"Enter"}) {
		t.Errorf("keys %v, want one Enter", f.keys)
	}
}

func shortSubmitWait(t *testing.T) {
	old := submitWait
	submitWait = 200 * time.Millisecond
	t.Cleanup(func() { submitWait = old })
}
