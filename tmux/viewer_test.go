package tmux

import "testing"

func TestServesKnowsTheServerTMUXNames(t *testing.T) {
	t.Setenv("TMUX_TMPDIR", "/run/t")
	c := New("story-x")
	if !c.Serves(SocketPath("story-x")+",123,0") || c.Serves(SocketPath("default")+",123,0") || c.Serves("") {
		t.Fatal("Serves must match only the client's own socket")
	}
	if !New("").Serves(SocketPath("default") + ",9,1") {
		t.Fatal("the default server is the socket named default")
	}
}
