package marker

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

var ctx = context.Background()

func newStore(t *testing.T) *Store {
	t.Helper()
	return NewStore(t.TempDir(), func(string) string { return "" })
}

func sample() *Marker {
	return &Marker{Version: 1, Mode: ModeStory, Status: StatusActive, StoriesRemaining: 2, OwnerSession: "o",
		Heartbeat: "2026-11-22T12:00:00Z"}
}

func TestResolvePath(t *testing.T) {
	if p := ResolvePath("/p", func(string) string { return "" }); p != "/p/.claude/.story-automator-active" {
		t.Fatal(p)
	}
	if p := ResolvePath("/p", func(string) string { return "x/m.json" }); p != "/p/x/m.json" {
		t.Fatal(p)
	}
	if p := ResolvePath("/p", func(string) string { return "/abs/m" }); p != "/abs/m" {
		t.Fatal(p)
	}
}

func TestCreateWritesMode0600AndRefusesActive(t *testing.T) {
	s := newStore(t)
	if _, err := s.Create(ctx, sample(), false); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", fi.Mode(), err)
	}
	if _, err := s.Create(ctx, sample(), false); !errors.Is(err, ErrExists) || Code(err) != "marker_exists" {
		t.Fatalf("second create: %v", err)
	}
	if _, err := s.Create(ctx, sample(), true); err != nil {
		t.Fatalf("forced create: %v", err)
	}
	// A finished or paused marker may be replaced without force.
	if _, err := s.Modify(ctx, func(m *Marker) error { m.Status = StatusPaused; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, sample(), false); err != nil {
		t.Fatalf("create over paused: %v", err)
	}
}

func TestCorruptMarkerIsReportedAndNeverOverwritten(t *testing.T) {
	s := newStore(t)
	if err := os.MkdirAll(s.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	garbage := []byte(`{"storiesRemaining": 2,`)
	if err := os.WriteFile(s.Path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(); Code(err) != "marker_corrupt" {
		t.Fatalf("read: %v", err)
	}
	_, err := s.Modify(ctx, func(m *Marker) error { m.Touch(time.Now()); return nil })
	if Code(err) != "marker_corrupt" {
		t.Fatalf("heartbeat on corrupt: %v", err)
	}
	if _, err := s.Create(ctx, sample(), false); Code(err) != "marker_corrupt" {
		t.Fatalf("create over corrupt without force: %v", err)
	}
	if b, _ := os.ReadFile(s.Path); string(b) != string(garbage) {
		t.Fatalf("corrupt marker overwritten: %q", b)
	}
	if err := os.WriteFile(s.Path, []byte(`[1,2]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(); Code(err) != "marker_corrupt" || !errors.Is(err, ErrNotObject) {
		t.Fatalf("non-object: %v", err)
	}
}

func TestSymlinkedMarkerIsRefused(t *testing.T) {
	s := newStore(t)
	if err := os.MkdirAll(s.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "target.json")
	if err := os.WriteFile(target, []byte(`{"storiesRemaining":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, s.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(); Code(err) != "marker_symlink" {
		t.Fatalf("read: %v", err)
	}
	if _, err := s.Modify(ctx, func(m *Marker) error { return nil }); Code(err) != "marker_symlink" {
		t.Fatalf("modify: %v", err)
	}
	if _, err := s.Remove(ctx); Code(err) != "marker_symlink" {
		t.Fatalf("remove: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != `{"storiesRemaining":1}` {
		t.Fatal("symlink target changed")
	}
}

func TestUnknownFieldsAndLegacyMarker(t *testing.T) {
	s := newStore(t)
	if err := os.MkdirAll(s.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path, []byte(`{"storiesRemaining":4,"epic":"2","vendor":{"k":[1,"a"]},"note":"keep me"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != SchemaVersion || m.Mode != ModeStory || m.Status != StatusActive || !m.Active() {
		t.Fatalf("legacy marker not an active story marker: %+v", m)
	}
	if _, err := s.Modify(ctx, func(m *Marker) error { m.StoriesRemaining = 3; return nil }); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	b, _ := os.ReadFile(s.Path)
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["note"] != "keep me" || raw["vendor"] == nil || raw["version"] != float64(1) || raw["storiesRemaining"] != float64(3) {
		t.Fatalf("rewrite lost fields: %s", b)
	}
}

func TestTouchAlwaysChangesHeartbeat(t *testing.T) {
	m := sample()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m.Touch(now)
	first := m.Heartbeat
	m.Touch(now)
	if m.Heartbeat == first {
		t.Fatal("two heartbeats at the same instant must differ")
	}
}

func TestLockTimesOutWhenHeldElsewhere(t *testing.T) {
	s := newStore(t)
	s.LockTimeout = 50 * time.Millisecond
	if err := os.MkdirAll(s.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	other := flock.New(s.LockPath())
	if ok, _ := other.TryLock(); !ok {
		t.Fatal("could not take lock")
	}
	defer func() {
		if err := other.Unlock(); err != nil {
			t.Error(err)
		}
	}()
	_, err := s.Create(ctx, sample(), false)
	if Code(err) != "marker_locked" {
		t.Fatalf("want marker_locked, got %v", err)
	}
	if _, err := os.Stat(s.Path); !os.IsNotExist(err) {
		t.Fatal("marker written without the lock")
	}
}

func TestRemove(t *testing.T) {
	s := newStore(t)
	if existed, err := s.Remove(ctx); existed || err != nil {
		t.Fatalf("remove missing: %v %v", existed, err)
	}
	if _, err := s.Create(ctx, sample(), false); err != nil {
		t.Fatal(err)
	}
	if existed, err := s.Remove(ctx); !existed || err != nil {
		t.Fatalf("remove: %v %v", existed, err)
	}
	if _, err := s.Read(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after remove: %v", err)
	}
}

func TestCaseVariantOfAKnownFieldIsNotDuplicated(t *testing.T) {
	m, err := Decode([]byte(`{"status":"active","Status":"paused","storiesRemaining":1}`))
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := m.Encode()
	if strings.Contains(string(enc), `"Status"`) {
		t.Fatalf("case variant written back as a second field: %s", enc)
	}
}

func TestUnknownModeIsNotActive(t *testing.T) {
	m, _ := Decode([]byte(`{"mode":"other","status":"active","storiesRemaining":0}`))
	if m.Active() {
		t.Fatal("a marker of an unknown mode must not ask for guarding")
	}
}
