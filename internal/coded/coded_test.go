package coded

import (
	"errors"
	"fmt"
	"testing"
)

// The one coded error carries what a command needs to print its failure,
// also when it is wrapped.
func TestErrorCarriesItsPlaceInTheContract(t *testing.T) {
	u := Usage("--x must be %d", 3)
	if u.Code != "usage_error" || u.Exit != ExitUsage || u.Error() != "--x must be 3" {
		t.Fatalf("usage: %+v", u)
	}
	f := Fail("marker_io", "cannot write %s", "m.json").WithAction("check the %s", "disk")
	f.Fields = map[string]any{"file": "m.json"}
	var got *Error
	if !errors.As(fmt.Errorf("loop start: %w", f), &got) || got.Code != "marker_io" || got.Exit != ExitFailed ||
		got.Action != "check the disk" || got.Fields["file"] != "m.json" {
		t.Fatalf("wrapped failure: %+v", got)
	}
}

func TestWrapKeepsTheCauseForErrorsIs(t *testing.T) {
	cause := errors.New("address in use")
	w := Wrap("model_sim_listen", fmt.Errorf("listen: %w", cause))
	if w.Code != "model_sim_listen" || w.Exit != ExitFailed || w.Error() != "listen: address in use" || !errors.Is(w, cause) {
		t.Fatalf("%+v", w)
	}
}
