package completion

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the scripts written now")

// The scripts for the fixture tree, as written: go test -run Golden -update
// rewrites them after a deliberate change, and the diff shows what changed.
func TestScriptsMatchTheGoldenFiles(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			var got bytes.Buffer
			if err := Write(&got, shell, fixtureApp()); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", shell+".golden")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -run Golden -update writes it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("%s script differs from %s (go test -run Golden -update rewrites it):\n%s", shell, golden, got.String())
			}
		})
	}
}
