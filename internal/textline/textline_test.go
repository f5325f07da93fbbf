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
