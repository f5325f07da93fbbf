package stophook

import (
	"strconv"
	"strings"
)

// CompletionSignal is the response analyzer's reading of one assistant message:
// whether it claims the work is done, and how sure the analyzer is (0–100).
type CompletionSignal struct {
	Complete   bool
	Confidence int
	// Evidence names what counted, in the order of the scoring table.
	Evidence []string
}

// Analyzer points (README "Prompt loops" documents this table; keep them in step).
const (
	pointsExitSignal    = 50  // a line `EXIT_SIGNAL: true`
	pointsStatusDone    = 40  // a line `STATUS: COMPLETE` (or DONE, COMPLETED, FINISHED)
	pointsNothingLeft   = 25  // "nothing left to do" phrasing
	pointsDoneWords     = 15  // completion words ("task complete", "all done", …)
	pointsTestsPass     = 20  // test results with passes and no failure
	pointsShrinking     = 10  // under half the previous iteration's length
	pointsExitFalse     = -50 // a line `EXIT_SIGNAL: false`; also cancels the signal
	pointsStatusOpen    = -30 // `STATUS: IN_PROGRESS`, BLOCKED, FAILED, …
	pointsTestsFail     = -30 // a failing test count or a FAIL line
	pointsWorkRemaining = -15 // "still need to", "next, I will", "TODO:" …

	// shrinkMinPrevious is the previous length below which shrinking means nothing.
	shrinkMinPrevious = 200
)

var (
	nothingLeftPhrases = []string{
		"nothing left to do", "nothing more to do", "nothing else to do", "nothing left to fix",
		"no remaining tasks", "no tasks remain", "no work remains", "no more work",
		"no further changes needed", "no further changes are needed", "no further work",
		"all tasks are complete", "all tasks complete", "all tasks are done", "all tasks done",
		"every task is complete", "all items are complete", "all steps are complete",
	}
	doneWordPhrases = []string{
		"task complete", "task is complete", "work is complete", "is now complete",
		"implementation is complete", "all done", "everything is done", "completed successfully",
		"successfully completed", "finished successfully", "all requirements are met",
		"all requirements met", "done and verified",
	}
	workRemainingPhrases = []string{
		"still need to", "next, i will", "next i will", "next, i'll", "remaining tasks:",
		"todo:", "not yet done", "not done yet", "will continue", "left to do:",
	}
	negations = []string{"not ", "n't ", "never ", "no longer "}
)

// AnalyzeResponse scores an assistant message for completion. prevLen is the
// length of the previous iteration's message (0 when unknown).
func AnalyzeResponse(msg string, prevLen int) CompletionSignal {
	lower := strings.ToLower(msg)
	var sig CompletionSignal
	score := 0
	add := func(points int, name string, completes bool) {
		score += points
		sig.Evidence = append(sig.Evidence, name)
		if completes {
			sig.Complete = true
		}
	}
	exit, status, failLine := scanStatusLines(lower)
	if exit == statusYes {
		add(pointsExitSignal, "exit-signal", true)
	}
	if status == statusYes {
		add(pointsStatusDone, "status-complete", true)
	}
	if containsAffirmed(lower, nothingLeftPhrases) {
		add(pointsNothingLeft, "nothing-left", true)
	}
	if containsAffirmed(lower, doneWordPhrases) {
		add(pointsDoneWords, "completion-words", true)
	}
	passed, failed := countTests(lower)
	if failed == 0 && !failLine && (passed > 0 || strings.Contains(lower, "all tests pass")) {
		add(pointsTestsPass, "tests-passing", false)
	}
	if prevLen >= shrinkMinPrevious && len(msg)*2 < prevLen {
		add(pointsShrinking, "shrinking", false)
	}
	if exit == statusNo {
		add(pointsExitFalse, "exit-signal-false", false)
		sig.Complete = false
	}
	if status == statusNo {
		add(pointsStatusOpen, "status-incomplete", false)
	}
	if failed > 0 || failLine {
		add(pointsTestsFail, "tests-failing", false)
	}
	if containsAny(lower, workRemainingPhrases) {
		add(pointsWorkRemaining, "work-remaining", false)
	}
	sig.Confidence = min(max(score, 0), 100)
	return sig
}

type statusValue int

const (
	statusNone statusValue = iota
	statusYes
	statusNo
)

// scanStatusLines reads `EXIT_SIGNAL:` and `STATUS:` lines (markdown bullets and
// emphasis tolerated) and go-test style FAIL lines (`--- FAIL: T`, `FAIL pkg`). The last line of each kind wins.
func scanStatusLines(lower string) (exit, status statusValue, failLine bool) {
	if !strings.Contains(lower, "status") && !strings.Contains(lower, "exit_signal") && !strings.Contains(lower, "fail") {
		return
	}
	for line := range strings.Lines(lower) {
		t := strings.Trim(line, " \t\r\n-*>#`_|")
		switch {
		case strings.HasPrefix(t, "exit_signal:"):
			exit = yesNo(strings.Trim(t[len("exit_signal:"):], " *`\"'"), []string{"true", "yes"}, []string{"false", "no"})
		case strings.HasPrefix(t, "status:"):
			status = yesNo(strings.Trim(t[len("status:"):], " *`\"'."),
				[]string{"complete", "completed", "done", "finished", "success"},
				[]string{"in_progress", "in progress", "in-progress", "working", "blocked", "failed", "incomplete", "partial"})
		case strings.HasPrefix(t, "fail:"), strings.HasPrefix(t, "fail\t"), strings.HasPrefix(t, "fail "), t == "fail":
			failLine = true
		}
	}
	return
}

func yesNo(v string, yes, no []string) statusValue {
	for _, y := range yes {
		if v == y {
			return statusYes
		}
	}
	for _, n := range no {
		if v == n {
			return statusNo
		}
	}
	return statusNone
}

// countTests sums "N passed" / "N failed" style counts ("12 passed",
// "3 tests failing", "0 failures"). It scans for the keywords and reads the
// number before them, which is much cheaper than a regexp on long messages.
func countTests(lower string) (passed, failed int) {
	for _, kw := range testKeywords {
		for off := 0; ; {
			i := strings.Index(lower[off:], kw.word)
			if i < 0 {
				break
			}
			at := off + i
			off = at + len(kw.word)
			if off < len(lower) && isWordByte(lower[off]) && lower[off] != 's' {
				continue // "passedly", but "failures" is fine
			}
			if n, ok := countBefore(lower[:at]); ok {
				if kw.pass {
					passed += n
				} else {
					failed += n
				}
			}
		}
	}
	return passed, failed
}

var testKeywords = []struct {
	word string
	pass bool
}{{"passed", true}, {"passing", true}, {"failed", false}, {"failing", false}, {"failure", false}}

// countBefore reads "N " or "N tests " (tests, examples, specs) at the end of s.
func countBefore(s string) (int, bool) {
	s = strings.TrimRight(s, " \t")
	for _, noun := range []string{"tests", "test", "examples", "example", "specs", "spec"} {
		if t, ok := strings.CutSuffix(s, noun); ok && (t == "" || !isWordByte(t[len(t)-1])) {
			s = strings.TrimRight(t, " \t")
			break
		}
	}
	end := len(s)
	start := end
	for start > 0 && s[start-1] >= '0' && s[start-1] <= '9' {
		start--
	}
	if start == end || end-start > 9 || (start > 0 && isWordByte(s[start-1])) {
		return 0, false
	}
	n, err := strconv.Atoi(s[start:end])
	return n, err == nil
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// containsAffirmed reports whether a phrase occurs without a negation just before it.
func containsAffirmed(lower string, phrases []string) bool {
	for _, p := range phrases {
		rest, off := lower, 0
		for {
			i := strings.Index(rest, p)
			if i < 0 {
				break
			}
			at := off + i
			if !negatedBefore(lower, at) {
				return true
			}
			off = at + len(p)
			rest = lower[off:]
		}
	}
	return false
}

func negatedBefore(lower string, at int) bool {
	window := lower[max(0, at-12):at]
	for _, n := range negations {
		if strings.Contains(window, n) {
			return true
		}
	}
	return false
}

func containsAny(lower string, phrases []string) bool {
	for _, p := range phrases {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return false
}
