package stophook

import (
	"testing"
)

func TestParseFixPlan(t *testing.T) {
	plan := "# Fix plan\n\n" +
		"- [x] reproduce the crash\n" +
		"* [X] add a failing test\n" +
		"  - [ ] fix the parser (attempts: 1/3)\n" +
		"1. [ ] migrate the schema (Attempts: 3/3)\n" +
		"2) [ ] update the docs (attempts: 4/3)\n" +
		"- [ ] no attempts note\n" +
		"- [ ] unlimited (attempts: 9/0)\n" +
		"```\n- [ ] inside a fence is not a step\n```\n" +
		"- not a checkbox\n" +
		"-[ ] no space after the bullet\n"
	got := ParseFixPlan(plan)
	want := FixPlanStatus{Steps: 7, Done: 2, Exhausted: 2, Open: 3}
	if got != want {
		t.Fatalf("ParseFixPlan = %+v, want %+v", got, want)
	}
	if got.Finished() {
		t.Error("a plan with open steps is not finished")
	}
}

func TestFixPlanFinished(t *testing.T) {
	cases := map[string]bool{
		"":                                   false, // no steps: nothing says it is done
		"just prose":                         false,
		"- [x] a\r\n- [x] b\r\n":             true,
		"- [x] a\n- [ ] b (attempts: 2/2)\n": true,
		"- [ ] b (attempts: 2/2)\n":          true,
		"- [x] a\n- [ ] b (attempts: 1/2)\n": false,
	}
	for plan, want := range cases {
		if got := ParseFixPlan(plan).Finished(); got != want {
			t.Errorf("%q: Finished = %v, want %v", plan, got, want)
		}
	}
}
