package monitor

import (
	"strings"
	"testing"
	"time"
)

func TestOptionsValidate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		change func(*Options)
		want   string
	}{
		{func(o *Options) { o.Timeout = 0 }, "--timeout must be positive"},
		{func(o *Options) { o.Rechecks = 0 }, "--completion-rechecks must be at least 1"},
		{func(o *Options) { o.RecheckGrace = -time.Second }, "--recheck-grace must not be negative"},
		{func(o *Options) { o.StuckAfter = -time.Second }, "--stuck-after must not be negative"},
	} {
		o := DefaultOptions()
		tc.change(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}
