package timeline

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
)

// shiftAfter moves every time of the state at or after from by d: the
// fixture run, resumed the next morning instead of 18 minutes later.
func shiftAfter(st *orchestrator.State, from time.Time, d time.Duration) {
	move := func(s *string) {
		if t, ok := parse(*s); ok && !t.Before(from) {
			*s = t.Add(d).Format(time.RFC3339)
		}
	}
	move(&st.UpdatedAt)
	move(&st.FinishedAt)
	for i := range st.Log {
		move(&st.Log[i].At)
	}
	for _, u := range st.Units {
		for _, step := range u.Steps {
			move(&step.VerifiedAt)
			for i := range step.Attempts {
				move(&step.Attempts[i].StartedAt)
				move(&step.Attempts[i].EndedAt)
			}
		}
	}
}

var barWidth = regexp.MustCompile(`<rect class="bar s-completed" x="[0-9.]+" y="[0-9.]+" width="([0-9.]+)"`)

func TestALongStandstillIsCutSoTheAttemptsStayReadable(t *testing.T) {
	t.Parallel()
	st, err := orchestrator.LoadState(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	resumed, _ := parse("2026-11-20T10:20:00Z")
	shiftAfter(st, resumed, 9*time.Hour)
	page, err := Render(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	if n := strings.Count(s, `<g class="break">`); n != 1 ||
		!strings.Contains(s, "no attempt ran for 9h17m, Nov 20 10:02:05 – Nov 20 19:20:00 UTC: drawn shorter than to scale") {
		t.Fatalf("%d breaks:\n%s", n, s)
	}
	// The 13-minute dev attempt after the night is drawn about as wide as in
	// the fixture (~95px), not the 15px a 10-hour axis would leave it.
	id := `<a href="#a-1-3-dev-2"`
	m := barWidth.FindStringSubmatch(s[strings.Index(s, id):])
	if w, _ := strconv.ParseFloat(m[1], 64); w < 80 {
		t.Fatalf("the attempt after the break is %.1f px wide", w)
	}
	// The escalation's dashed line runs across the break to the resume.
	if !strings.Contains(s, "it went on 9h18m later") {
		t.Error("the escalation does not say how long the run stood")
	}
}

func TestTheAxisIsLabelledForShortAndLongRuns(t *testing.T) {
	t.Parallel()
	start, _ := parse("2026-11-20T09:00:03Z")
	for _, c := range []struct {
		span     time.Duration
		min, max int
		first    string
	}{
		{15 * time.Second, 4, 10, "09:00:04"},
		{110 * time.Minute, 5, 10, "09:15"},
		{50 * time.Hour, 4, 10, "Nov 20 12:00"},
	} {
		sc := newScale(start, start.Add(c.span), [][2]time.Time{{start, start.Add(c.span)}})
		ticks := sc.ticks()
		if len(ticks) < c.min || len(ticks) > c.max || ticks[0].Label != c.first {
			t.Errorf("%s: %d ticks %v", c.span, len(ticks), ticks)
		}
	}
}
