package memtrim

import (
	"os"
	"strings"
	"testing"
)

func TestOnlyTheExecutablesReadOnlyPrivateMappingsAreTrimmed(t *testing.T) {
	const exe = "/usr/bin/story automator"
	cases := map[string]bool{
		"00400000-008f4000 r-xp 00000000 fe:01 123 /usr/bin/story automator": true,  // code
		"008f4000-00e06000 r--p 004f4000 fe:01 123 /usr/bin/story automator": true,  // read-only data
		"00e06000-00e68000 rw-p 00a06000 fe:01 123 /usr/bin/story automator": false, // the program's data
		"7f00000-7f10000 r--s 00000000 fe:01 123 /usr/bin/story automator":   false, // shared
		"7f00000-7f10000 r-xp 00000000 fe:01 9 /usr/lib/libc.so.6":           false, // another file
		"7f00000-7f10000 rw-p 00000000 00:00 0":                              false, // anonymous
	}
	for line, want := range cases {
		if _, _, ok := readOnlyMappingOf(line, exe); ok != want {
			t.Errorf("%q: trimmed %v, want %v", line, ok, want)
		}
	}
}

// Trimming releases the executable's pages, and the program goes on.
func TestTrimReleasesAndTheProgramGoesOn(t *testing.T) {
	if n := Trim(); n <= 0 {
		t.Fatalf("Trim released %d bytes", n)
	}
	if !strings.Contains(strings.ToUpper("still running"), "RUNNING") {
		t.Fatal("code after a trim misbehaves")
	}
	if _, err := os.ReadFile("/proc/self/status"); err != nil {
		t.Fatal(err)
	}
}
