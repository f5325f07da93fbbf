package limit

import (
	"strconv"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/lazyre"
)

// clockWords is a reset time as the CLIs write it: an optional date
// ("Nov 30, ", "Nov 28th, 2026 "), a time of day ("3:14pm", "12:56 PM",
// "15:04") and an optional zone ("(UTC)", "(America/New_York)", "UTC").
var clockWords = lazyre.New(`(?i)^\s*(?:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?(?:\s+(\d{4}))?,?\s+)?(\d{1,2}):(\d{2})\s*([ap]\.?m\.?)?(?:\s*\(([A-Za-z0-9_+\-/]+)\)|\s+([A-Z]{2,5})\b)?`)

// staleSlack is how far before now a time of day may lie and still be
// today's: the CLI rounds down to the minute, and its words may be read a
// little after they were written.
const staleSlack = 2 * time.Minute

// ParseClock reads a reset time at the start of s. A time of day with no
// date is the next one at or after w.At (allowing staleSlack); a date with
// no year the next such date. The zone named is loaded by its name (an
// IANA name or UTC); none, or one not known, is w.Loc.
func ParseClock(s string, w Where) (time.Time, bool) {
	m := clockWords().FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	hour, _ := strconv.Atoi(m[4])
	minute, _ := strconv.Atoi(m[5])
	switch ampm := strings.ToLower(strings.ReplaceAll(m[6], ".", "")); {
	case minute > 59, ampm == "" && hour > 23, ampm != "" && (hour < 1 || hour > 12):
		return time.Time{}, false
	case ampm == "am" && hour == 12:
		hour = 0
	case ampm == "pm" && hour < 12:
		hour += 12
	}
	loc := zoneOf(m[7]+m[8], w)
	now := w.At.In(loc)
	year, month, day := now.Date()
	if m[1] != "" {
		month = monthOf(m[1])
		day, _ = strconv.Atoi(m[2])
		if m[3] != "" {
			year, _ = strconv.Atoi(m[3])
		}
	}
	t := time.Date(year, month, day, hour, minute, 0, 0, loc)
	if t.Before(now.Add(-staleSlack)) {
		switch {
		case m[1] == "":
			t = t.AddDate(0, 0, 1)
		case m[3] == "":
			t = t.AddDate(1, 0, 0)
		}
	}
	return t, true
}

// zoneOf is the zone a CLI named: a location's name, UTC, or the
// abbreviation w.Loc goes by at w.At; anything else is w.Loc.
func zoneOf(name string, w Where) *time.Location {
	switch strings.ToUpper(name) {
	case "":
		return w.loc()
	case "UTC", "GMT", "Z":
		return time.UTC
	}
	if abbr, _ := w.At.In(w.loc()).Zone(); abbr == name {
		return w.loc()
	}
	if loc, err := time.LoadLocation(name); err == nil {
		return loc
	}
	return w.loc()
}

func monthOf(name string) time.Month {
	i := strings.Index("janfebmaraprmayjunjulaugsepoctnovdec", strings.ToLower(name[:3]))
	return time.Month(i/3 + 1)
}

// delayWords is a retry delay: "3600s", "1.5s", "90000ms", "2h".
var delayWords = lazyre.New(`^\s*(\d+(?:\.\d+)?(?:ms|s|m|h))\b`)

// ParseDelay reads a retry delay at the start of s: the limit lifts that
// long after w.At.
func ParseDelay(s string, w Where) (time.Time, bool) {
	m := delayWords().FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	d, err := time.ParseDuration(m[1])
	if err != nil || d <= 0 {
		return time.Time{}, false
	}
	return w.At.Add(d), true
}
