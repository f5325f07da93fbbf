package status

import (
	"context"
	"encoding/json"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
)

// Watch shows a fresh view every interval, until ctx ends or the run is done.
func Watch(ctx context.Context, every time.Duration, collect func() View, show func(View) error) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		v := collect()
		if err := show(v); err != nil {
			return err
		}
		if v.Run != nil && v.Run.Status == orchestrator.RunDone {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Fields is the view as the fields of `status`'s JSON object.
func (v View) Fields() (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	fields := map[string]any{}
	return fields, json.Unmarshal(data, &fields)
}
