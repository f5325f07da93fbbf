package monitor

import (
	"errors"
	"fmt"
	"time"
)

// Validate checks the options as monitor-session's flags give them; its
// messages name those flags.
func (o Options) Validate() error {
	if o.Timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	if o.Rechecks < 1 {
		return errors.New("--completion-rechecks must be at least 1")
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"recheck-grace", o.RecheckGrace}, {"return-after", o.ReturnAfter}, {"idle-debounce", o.IdleDebounce},
		{"start-timeout", o.StartTimeout}, {"stuck-after", o.StuckAfter}} {
		if d.v < 0 {
			return fmt.Errorf("--%s must not be negative", d.flag)
		}
	}
	return nil
}
