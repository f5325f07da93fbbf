package lazyre

import "testing"

func TestNewCompilesOnceOnFirstUse(t *testing.T) {
	re := New(`^a+$`)
	if first, second := re(), re(); first != second {
		t.Fatal("compiled twice")
	}
	if !re().MatchString("aaa") || re().MatchString("b") {
		t.Fatal("wrong expression")
	}
}
