package workflows

import "testing"

func TestParseTarget(t *testing.T) {
	if _, err := ParseTarget("nope", "1.2"); err == nil {
		t.Fatal("unknown step accepted")
	}
	if k, err := ParseTarget(StepDev, "1.2"); err != nil || k.Dotted() != "1.2" {
		t.Fatalf("dev 1.2: %v %v", k, err)
	}
	if k, err := ParseTarget(StepRetro, "epic-3"); err != nil || k.Epic != "3" {
		t.Fatalf("retro epic-3: %+v %v", k, err)
	}
	if _, err := ParseTarget(StepDev, "epic-3"); err == nil {
		t.Fatal("an epic id is a story key only for retro")
	}
}
