package timeline

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/story-automator/story-automator/orchestrator"
)

var update = flag.Bool("update", false, "rewrite the golden files (page HTML and screenshot)")

const goldenHTML = "testdata/timeline.golden.html"

// fixturePage is the fixture run's page, drawn as `runs show --html` draws it.
func fixturePage(t *testing.T) []byte {
	t.Helper()
	st, err := orchestrator.LoadState(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	page, err := Render(st, Options{StateFile: st.Config.StateFile})
	if err != nil {
		t.Fatal(err)
	}
	return page
}

func TestFixturePageIsTheGoldenPage(t *testing.T) {
	t.Parallel()
	page := fixturePage(t)
	if *update {
		if err := os.WriteFile(goldenHTML, page, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenHTML)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(page, want) {
		t.Fatalf("the page differs from %s (rerun with -update after checking the change):\n%s", goldenHTML, firstDiff(page, want))
	}
	// A run that is not going never reads the clock: drawing it again later
	// gives the same bytes.
	st, _ := orchestrator.LoadState(fixturePath)
	again, _ := Render(st, Options{StateFile: st.Config.StateFile, Now: time.Now()})
	if !bytes.Equal(again, page) {
		t.Fatal("the page of a finished run depends on the time it is drawn")
	}
}

func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, al[i], bl[i])
		}
	}
	return "one is a prefix of the other"
}

func TestFixturePageShowsEveryAttemptWaitEscalationAndFallback(t *testing.T) {
	t.Parallel()
	page := string(fixturePage(t))
	count := func(s string) int { return strings.Count(page, s) }
	// 21 attempts (one never started an agent); the legend's 10 colours
	// and its fallback and retry samples.
	if n := count(`<rect class="bar s-`); n != 21+12 {
		t.Errorf("%d bars, want 21 attempts and 12 in the legend", n)
	}
	if n := count(`<tr id="a-`); n != 21 {
		t.Errorf("%d attempt rows, want 21", n)
	}
	for _, want := range []string{
		`<rect class="bar s-limited"`, `<rect class="bar s-interrupted"`, `<rect class="bar s-error"`,
		`<rect class="bar s-stuck"`, `<rect class="bar s-timeout"`, `<rect class="bar s-crashed"`,
		`<rect class="bar s-incomplete"`,
		// The limit wait of 1.2's dev step, hatched, with its length and reason.
		`<rect class="wait"`, `1.2 dev waited 20m00s for the rate_limit limit (codex) to lift, 09:12:00 – 09:32:00 UTC`,
		// The escalation, and how long the run stood paused.
		`1.3 dev paused the run at 10:02:00 UTC: escalated: the agent waits at its folder trust dialog`, "it went on 18m00s later",
		// Fallback and retry marks; spend per story; the commit.
		`<polygon class="fallback"`, "↻ dev #2", "1.1 committed 3f2a9c1 at 09:50:20 UTC",
		`href="#a-1-2-dev-3"`, `<tr id="a-1-2-dev-3">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "s-running") && strings.Contains(page, `class="now"`) {
		t.Error("a finished run shows a now line")
	}
}

func TestHostileStoryTitleIsEscapedEverywhere(t *testing.T) {
	t.Parallel()
	st, err := orchestrator.LoadState(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	const hostile = `</title></svg><script>alert(1)</script><img src=x onerror=alert(2)>"' & <b>`
	st.Units[0].Title = hostile
	st.Units[0].Steps[1].Attempts[0].Reason = hostile
	st.Units[0].Steps[1].Attempts[0].Detail = hostile
	st.Log[3].Message = "escalated: " + hostile
	page, err := Render(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	if strings.Contains(s, "<script") || strings.Contains(s, "<img") || strings.Contains(s, "<b>") {
		t.Fatal("an element came from a story title")
	}
	// Parsed as a browser would, no element but those the template writes.
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && (n.Data == "script" || n.Data == "img" || n.Data == "b") {
			t.Fatalf("the page holds a <%s> element", n.Data)
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(a.Key, "on") {
				t.Fatalf("the page holds an event handler %s=%q", a.Key, a.Val)
			}
		}
	}
	if !strings.Contains(s, "&lt;/title&gt;&lt;/svg&gt;&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the title is not shown, escaped, in the page")
	}
}

var externalRef = regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)

func TestPageReferencesNothingOutsideItself(t *testing.T) {
	t.Parallel()
	page := fixturePage(t)
	if m := externalRef.Find(page); m != nil {
		t.Fatalf("the page names an address: %q", m)
	}
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.Data {
		case "script", "link", "img", "iframe", "object", "embed", "image", "use", "font", "base", "video", "audio", "source":
			t.Errorf("the page holds a <%s> element", n.Data)
		}
		for _, a := range n.Attr {
			switch a.Key {
			case "src", "srcset", "xlink:href", "action", "formaction", "poster", "data":
				t.Errorf("<%s %s=%q>: the page loads nothing", n.Data, a.Key, a.Val)
			case "href":
				if !strings.HasPrefix(a.Val, "#") {
					t.Errorf("<%s href=%q> leaves the page", n.Data, a.Val)
				}
			}
		}
	}
	// CSS loads nothing either: no @import, and url() only of the page's own pattern.
	for _, m := range regexp.MustCompile(`url\(([^)]*)\)|@import`).FindAllSubmatch(page, -1) {
		if string(m[0]) == "@import" || !bytes.HasPrefix(m[1], []byte("#")) {
			t.Errorf("CSS loads %q", m[0])
		}
	}
	if !bytes.Contains(page, []byte(`content="default-src 'none'; style-src 'unsafe-inline'"`)) {
		t.Error("the page has no content security policy that forbids loading anything")
	}
}

func TestLiveRunDrawsTheRunningAttemptUntilNow(t *testing.T) {
	t.Parallel()
	st, err := orchestrator.LoadState(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	st.Status, st.FinishedAt = orchestrator.RunRunning, ""
	review := &st.Units[2].Steps[3].Attempts[0]
	review.FinalState, review.EndedAt, review.WallMs, review.Usage = "", "", 0, nil
	st.Units[2].Steps[4].VerifiedAt, st.Units[2].Commit = "", ""
	st.Units = st.Units[:3]
	now, _ := time.Parse(time.RFC3339, review.StartedAt)
	now = now.Add(3 * time.Minute)
	st.UpdatedAt = now.Add(-10 * time.Second).Format(time.RFC3339)
	page, err := Render(st, Options{Live: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	if !strings.Contains(s, `<rect class="bar s-running"`) || !strings.Contains(s, `class="now"`) ||
		!strings.Contains(s, "1.3 review attempt 1 (review cycle 1): running") || !strings.Contains(s, "10:38:10 – 10:41:10 UTC (3m00s)") {
		t.Fatalf("the running attempt is not drawn until now:\n%s", s)
	}
	if !strings.Contains(s, `<dt>status</dt><dd title="running">`) {
		t.Fatalf("a live run's status is not running:\n%s", s)
	}
	// Not live (its orchestrator is gone): the attempt stops where the state
	// was last written, unfinished, and the run is interrupted.
	page, _ = Render(st, Options{Now: now})
	if s := string(page); !strings.Contains(s, `<rect class="bar s-unfinished"`) || strings.Contains(s, `class="now"`) {
		t.Fatal("a run whose orchestrator is gone is drawn as going on")
	}
	if s := string(page); !strings.Contains(s, `<dt>status</dt><dd title="interrupted">`) || strings.Contains(s, `<dt>status</dt><dd title="running">`) {
		t.Fatalf("a run whose orchestrator is gone is not shown interrupted:\n%s", s)
	}
}
