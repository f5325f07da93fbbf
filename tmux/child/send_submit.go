package child

import (
	"context"
	"strings"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/tmux"
)

// SendSubmitAttempts bounds how often send presses Enter for one text.
const SendSubmitAttempts = 3

// submitWait bounds how long send waits for one Enter, or its Backspaces,
// to show on the screen (a variable so tests can shorten it).
var submitWait = SendVerifyWait

// submitState is what the pane shows after an Enter.
type submitState int

const (
	// submitPending: nothing yet; the CLI has not handled the Enter, or ignored it.
	submitPending submitState = iota
	// submitDone: the input box is empty again, so the text was submitted.
	submitDone
	// submitNewline: the Enter went into the input box as a newline.
	submitNewline
)

// submitCheck tells, from the pane after an Enter, whether the Enter
// submitted the pasted text, was taken as a newline, or shows nothing yet.
type submitCheck struct {
	pasted       string   // the screen the Enter is judged against, showing the paste
	hints        []string // empty-box hints the paste replaced
	endLine      string   // the last line of pasted that shows the paste's end, trimmed
	text         string
	placeholders []string
}

// newSubmitCheck is the check for a paste that turned the screen before
// into pasted. A hint of the agent's empty input box that the paste made
// disappear must come back after a submit; a CLI whose box showed none
// cannot be checked.
func newSubmitCheck(before, pasted, text string, paste agent.Paste) submitCheck {
	c := submitCheck{text: text, placeholders: paste.Placeholders}.on(pasted)
	for _, h := range paste.EmptyHints {
		if strings.Count(pasted, h) < strings.Count(before, h) {
			c.hints = append(c.hints, h)
		}
	}
	return c
}

// on is the check judged against screen, which shows the paste not yet
// submitted.
func (c submitCheck) on(screen string) submitCheck {
	c.pasted = screen
	c.endLine = pasteEndLine(screen, c.text, c.placeholders)
	return c
}

// canTell reports whether the screen can show that an Enter submitted.
func (c submitCheck) canTell() bool { return len(c.hints) > 0 }

// judge reads a screen captured after an Enter: done when an empty-box
// hint is back, a newline when one blank line was added below the line
// where the paste ends, pending otherwise (more blank lines than one Enter
// makes are a frame half drawn, not a newline).
func (c submitCheck) judge(screen string) submitState {
	for _, h := range c.hints {
		if strings.Count(screen, h) > strings.Count(c.pasted, h) {
			return submitDone
		}
	}
	if c.endLine == "" {
		return submitPending
	}
	now, ok := blanksAfter(screen, c.endLine)
	base, _ := blanksAfter(c.pasted, c.endLine)
	if ok && now == base+1 {
		return submitNewline
	}
	return submitPending
}

// restored reports whether screen shows the paste as the screen judged
// against did: its end line, with as many blank lines under it.
func (c submitCheck) restored(screen string) bool {
	if c.endLine == "" {
		return false
	}
	now, ok := blanksAfter(screen, c.endLine)
	base, _ := blanksAfter(c.pasted, c.endLine)
	return ok && now == base
}

// pasteEndLine is the last line of screen that shows the end of the paste:
// one with a placeholder, or one whose visible characters, but for a
// prompt sign before them, end text (three at least, or all of it); ""
// when none does.
func pasteEndLine(screen, text string, placeholders []string) string {
	want := squash(text)
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		for _, ph := range placeholders {
			if strings.Contains(line, ph) {
				return line
			}
		}
		sq := []rune(squash(line))
		for _, end := range [][]rune{sq, sq[min(1, len(sq)):]} {
			if len(end) > 0 && strings.HasSuffix(want, string(end)) && (len(end) >= 3 || string(end) == want) {
				return line
			}
		}
	}
	return ""
}

// blanksAfter counts the blank lines (nothing but spaces and box drawing)
// right below the last line of screen that reads line; false when no line does.
func blanksAfter(screen, line string) (int, bool) {
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != line {
			continue
		}
		n := 0
		for _, l := range lines[i+1:] {
			if squash(l) != "" {
				break
			}
			n++
		}
		return n, true
	}
	return 0, false
}

// submit presses Enter for a paste, after settle. Where the screen can
// tell (check.canTell), it then waits for the input box to empty: an Enter
// the CLI took as a newline is taken back with Backspace, one it has not
// handled is pressed again, up to SendSubmitAttempts Enters in all. A CLI
// can take an Enter as part of the paste while its screen already shows
// the paste (Gemini CLI 0.61 handles keys with its state from before the
// paste until it has re-rendered), so the settle alone is not enough on a
// loaded machine.
func submit(ctx context.Context, tc *tmux.Client, name string, check submitCheck, settle time.Duration) error {
	for attempt := 1; ; attempt++ {
		time.Sleep(settle)
		if check.canTell() {
			var done bool
			var err error
			if check, done, err = rebase(ctx, tc, name, check, attempt > 1); done || err != nil {
				return err
			}
		}
		if err := tc.SendKey(ctx, name, "Enter"); err != nil {
			return err
		}
		if !check.canTell() {
			return nil
		}
		state := awaitSubmit(ctx, tc, name, check)
		if state == submitDone {
			return nil
		}
		if attempt == SendSubmitAttempts {
			return ErrSubmitUnverified
		}
		if state != submitNewline {
			continue
		}
		if done, err := takeBackNewline(ctx, tc, name, check); done || err != nil {
			return err
		}
	}
}

// rebase reads the screen just before an Enter, settled (the same on two
// captures in a row) unlike the first screen that showed the paste, and
// judges the next Enter against it; done when it shows the text submitted
// already (an earlier Enter handled late). Only after an Enter (entered) is
// an added blank line a newline to take back: before any, it is how the
// settled box draws the paste.
func rebase(ctx context.Context, tc *tmux.Client, name string, check submitCheck, entered bool) (submitCheck, bool, error) {
	prev := ""
	screen, ok := waitForScreen(ctx, tc, name, submitWait, func(screen string) bool {
		same := screen == prev
		prev = screen
		return same
	})
	if !ok && screen == "" {
		return check, false, ErrSubmitUnverified
	}
	switch check.judge(screen) {
	case submitDone:
		return check, entered, nil
	case submitNewline:
		if entered {
			if done, err := takeBackNewline(ctx, tc, name, check); done || err != nil {
				return check, done, err
			}
			return check, false, nil
		}
	}
	return check.on(screen), false, nil
}

// awaitSubmit waits up to submitWait for the Enter to show as a submit,
// or as a newline on two captures in a row (not a frame half drawn).
func awaitSubmit(ctx context.Context, tc *tmux.Client, name string, check submitCheck) submitState {
	seen, prev := submitPending, ""
	waitForScreen(ctx, tc, name, submitWait, func(screen string) bool {
		state := check.judge(screen)
		if state == submitDone || (state == submitNewline && screen == prev) {
			seen = state
		}
		prev = screen
		return seen != submitPending
	})
	return seen
}

// takeBackNewline presses Backspace and waits for the input box to show
// the paste exactly as before (its last line, and as many blank lines under
// it); done when it shows the text submitted instead (an earlier Enter was
// handled late). Anything else — a Backspace that took a character of the
// text — fails the send rather than submit a changed text.
func takeBackNewline(ctx context.Context, tc *tmux.Client, name string, check submitCheck) (bool, error) {
	if err := tc.SendKey(ctx, name, "BSpace"); err != nil {
		return false, err
	}
	done := false
	if _, ok := waitForScreen(ctx, tc, name, submitWait, func(screen string) bool {
		done = check.judge(screen) == submitDone
		return done || check.restored(screen)
	}); !ok {
		return false, ErrSubmitUnverified
	}
	return done, nil
}
