package textline

import "testing"

func TestCutOneLineOrDash(t *testing.T) {
	cases := []struct{ got, want string }{
		{Cut("héllo world", 5), "héll…"},
		{Cut("short", 5), "short"},
		{Cut("日本語のテキスト", 7), "日本語…"}, // wide runes take two columns each
		{Cut("unbounded", 0), "unbounded"},
		{OneLine("  a\n\tb   c "), "a b c"},
		{OrDash(""), "—"},
		{OrDash("x"), "x"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: %q, want %q", i, c.got, c.want)
		}
	}
}

func TestWidthCountsTerminalColumns(t *testing.T) {
	cases := []struct {
		s    string
		want int
	}{
		{"plain", 5},
		{"héllo", 5},          // precomposed
		{"he\u0301llo", 5},    // combining acute takes no column
		{"日本語", 6},            // CJK ideographs are wide
		{"한국어", 6},            // Hangul syllables are wide
		{"ｆｕｌｌ", 8},           // fullwidth forms
		{"🚀 done", 7},         // emoji presentation is wide
		{"✻ Brewed", 8},       // a dingbat shown as text is narrow (Claude Code's turn line)
		{"a\u200db\ufe0f", 2}, // joiner and variation selector take none
		{"tab\there", 7},      // controls take none
		{"—", 1},
		{"\U0001F44D\U0001F3FD", 2}, // thumbs up with a skin tone is one picture
		{"\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466", 2}, // a ZWJ family is one picture
		{"\U0001F1EF\U0001F1F5", 2},                                       // a flag: two regional indicators
		{"e\u0301\u0302", 1},                                              // a base with two combining marks
		{"\u0301", 0},                                                     // a combining mark alone takes none
	}
	for _, c := range cases {
		if got := Width(c.s); got != c.want {
			t.Errorf("Width(%q) = %d, want %d", c.s, got, c.want)
		}
	}
	if got := PadRight("日本", 6); got != "日本  " {
		t.Errorf("PadRight = %q", got)
	}
	if got := PadRight("toolong", 3); got != "toolong" {
		t.Errorf("PadRight of a wider string = %q", got)
	}
	if got := Cut("🚀🚀🚀", 5); got != "🚀🚀…" {
		t.Errorf("Cut of emoji = %q", got)
	}
	// A cut keeps whole clusters: the skin tone stays with its hand, the
	// family is not split at a joiner, the mark stays on its letter.
	thumbs := "\U0001F44D\U0001F3FD"
	family := "\U0001F468\u200d\U0001F469\u200d\U0001F467"
	for _, c := range []struct {
		s    string
		w    int
		want string
	}{
		{thumbs + thumbs + thumbs, 5, thumbs + thumbs + "…"},
		{family + family, 3, family + "…"},
		{"ab" + family, 3, "ab…"},
		{"he\u0301llo", 3, "he\u0301…"},
	} {
		if got := Cut(c.s, c.w); got != c.want || Width(got) > c.w {
			t.Errorf("Cut(%q, %d) = %q (%d columns), want %q", c.s, c.w, got, Width(got), c.want)
		}
	}
}

func TestStripANSI(t *testing.T) {
	in := "\x1b[1;32mgreen\x1b[0m \x1b]0;title\x07plain \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1b(Bend"
	if got := StripANSI(in); got != "green plain link end" {
		t.Fatalf("%q", got)
	}
}
