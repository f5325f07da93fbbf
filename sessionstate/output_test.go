package sessionstate

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOutputTailResolvesEscapesAndOverwrites(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.log")
	data := "one\r\ntwo\r\n\x1b[31mthree\x1b[0m\r\nspin 1\rspin 2\rdone\r\n\r\n"
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := OutputTail(p, 2)
	if err != nil || got != "three\ndone\n" {
		t.Fatalf("%q %v", got, err)
	}
}
