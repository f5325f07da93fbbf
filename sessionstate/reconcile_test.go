package sessionstate

import (
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
)

func TestReconcileSessionSettlesALostRunnerOnce(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_800_000_000, 0)
	if _, err := Update(dir, "sa-x", func(st *State) error {
		st.Lifecycle, st.PanePid = LifecycleStarted, 4242
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	alive := func(int) bool { return false }
	if st, err := Reconcile(dir, "sa-x", now, alive); err != nil || st.Lifecycle != LifecycleStarted {
		t.Fatalf("a live runner was settled: %+v %v", st, err)
	}
	dead := func(int) bool { return true }
	st, err := Reconcile(dir, "sa-x", now, dead)
	if err != nil || st.Lifecycle != LifecycleLost || st.ExitedAt != marker.Timestamp(now) {
		t.Fatalf("lost runner: %+v %v", st, err)
	}
	st, _ = Reconcile(dir, "sa-x", now.Add(time.Hour), dead)
	if st.ExitedAt != marker.Timestamp(now) {
		t.Fatalf("settled twice: %+v", st)
	}
}
