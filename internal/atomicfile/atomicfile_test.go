package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Write and Replace differ only in the fsyncs, which no test can see
// without a machine crash: both replace the file whole, set its mode, leave
// no temp file and refuse a symlink.
var writers = map[string]func(string, []byte, os.FileMode) error{"Write": Write, "Replace": Replace}

func TestWriteReplacesAndSetsMode(t *testing.T) {
	for name, write := range writers {
		t.Run(name, func(t *testing.T) { testReplacesAndSetsMode(t, write) })
	}
}

func testReplacesAndSetsMode(t *testing.T, write func(string, []byte, os.FileMode) error) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(p)
	if err := write(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "new" {
		t.Fatalf("content %q", b)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if os.SameFile(before, fi) {
		t.Fatal("the file was written in place: a reader could see a mix")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
}

func TestWriteRefusesSymlink(t *testing.T) {
	for name, write := range writers {
		t.Run(name, func(t *testing.T) { testRefusesSymlink(t, write) })
	}
}

func testRefusesSymlink(t *testing.T, write func(string, []byte, os.FileMode) error) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := write(link, []byte("x"), 0o600); !errors.Is(err, ErrSymlink) {
		t.Fatalf("want ErrSymlink, got %v", err)
	}
	b, _ := os.ReadFile(target)
	if string(b) != "keep" {
		t.Fatal("target changed")
	}
}

func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.json")
	old := filepath.Join(dir, ".m.json.tmp-123")
	fresh := filepath.Join(dir, ".m.json.tmp-456")
	other := filepath.Join(dir, ".other.tmp-1")
	for _, f := range []string{old, fresh, other} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(other, long, long); err != nil {
		t.Fatal(err)
	}
	RemoveStaleTemps(p, time.Minute)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatal("stale temp kept")
	}
	for _, f := range []string{fresh, other} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%s removed", f)
		}
	}
}

func TestSweepTempsRemovesOnlyTempsOfOwnedTargets(t *testing.T) {
	dir := t.TempDir()
	names := map[string]bool{ // name → swept
		".state.md.tmp-123":  true,
		".state.md.tmp-abc":  false, // not what Write makes
		".other.md.tmp-123":  false, // a target nobody owns
		"state.md.tmp-123":   false, // no leading dot
		".state.md.tmp-":     false,
		".state.md":          false,
		".state.md.tmp-1.md": false,
	}
	for n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".state.md.tmp-9"), 0o700); err != nil { // a directory is never a temp of Write
		t.Fatal(err)
	}
	removed := SweepTemps(dir, func(target string) bool { return target == "state.md" })
	if len(removed) != 1 {
		t.Fatalf("removed %v", removed)
	}
	for n, swept := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); os.IsNotExist(err) != swept {
			t.Errorf("%s: swept %v, want %v", n, os.IsNotExist(err), swept)
		}
	}
}

func TestMoveAsideKeepsTheFileUnderACorruptName(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("x", 3600))
	var got []string
	for i := 0; i < 3; i++ {
		if err := os.WriteFile(p, []byte{'{', byte('a' + i)}, 0o600); err != nil {
			t.Fatal(err)
		}
		to, err := MoveAside(p, now)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, filepath.Base(to))
		if data, _ := os.ReadFile(to); string(data) != string([]byte{'{', byte('a' + i)}) {
			t.Fatalf("%s holds %q", to, data)
		}
	}
	want := []string{"state.json.corrupt-20260304T040607Z", "state.json.corrupt-20260304T040607Z-2", "state.json.corrupt-20260304T040607Z-3"}
	if !slices.Equal(got, want) {
		t.Fatalf("moved aside to %v, want %v", got, want)
	}
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Fatalf("the corrupt file is still in place: %v", err)
	}
}
