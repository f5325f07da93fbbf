package marker

import "github.com/story-automator/story-automator/internal/proc"

// OwnerAlive reports whether the marker's owner process is alive: its lock
// held when it names one (the truth), else its pid alive and, when the start
// time was recorded, the same process. A marker with no owner process is not
// judged here (false).
func OwnerAlive(m *Marker) bool {
	if m.OwnerLock != "" {
		return proc.LockHeld(m.OwnerLock)
	}
	return m.OwnerPid > 0 && proc.Is(m.OwnerPid, m.OwnerPidStart)
}
