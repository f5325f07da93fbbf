package dashboard

import "charm.land/bubbles/v2/key"

// keyMap is every key the dashboard answers to.
type keyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom    key.Binding
	NextView, PrevView, Run, Live, Runs, Loops key.Binding
	Deferred, Actions                          key.Binding
	Attach, Pause, Resume, Stop, State         key.Binding
	Resolve, Continue, Replan                  key.Binding
	Help, Quit                                 key.Binding
}

func newKeyMap() keyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return keyMap{
		Up: b("↑/k", "previous story", "up", "k"), Down: b("↓/j", "next story", "down", "j"),
		PageUp: b("pgup", "page up", "pgup"), PageDown: b("pgdn", "page down", "pgdown"),
		Top: b("g/home", "first", "g", "home"), Bottom: b("G/end", "last", "G", "end"),
		NextView: b("tab", "view", "tab"), PrevView: b("shift+tab", "previous view", "shift+tab"),
		Run: b("1", "run", "1"), Live: b("2", "live pane", "2"), Runs: b("3", "runs", "3"), Loops: b("4", "loops", "4"),
		Deferred: b("5", "deferred work", "5"), Actions: b("6", "action items", "6"),
		Attach: b("a", "attach", "a"), Pause: b("p", "pause", "p"), Resume: b("r", "resume", "r"),
		Stop: b("s", "stop", "s"), State: b("e", "state", "e"),
		Resolve: b("v", "resolve", "v"), Continue: b("c", "continue", "c"), Replan: b("n", "replan", "n"),
		Help: b("?", "help", "?"), Quit: b("q", "quit", "q", "ctrl+c"),
	}
}

// ShortHelp is the footer's keys.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.NextView, k.Attach, k.Pause, k.Resume, k.Stop, k.State, k.Help, k.Quit}
}

// FullHelp is the help view's keys, by column.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.NextView, k.PrevView, k.Run, k.Live, k.Runs, k.Loops, k.Deferred, k.Actions, k.Help, k.Quit},
		{k.Attach, k.Pause, k.Resume, k.Stop, k.State, k.Resolve, k.Continue, k.Replan},
	}
}
