package workflows

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/spend"
)

func TestPolicyReadsPricesBudgetsAndStepModels(t *testing.T) {
	p, err := ParsePolicy("w.yaml", []byte(`
prices:
  my-model: {input: 3, output: 15.5, cacheRead: 0.3}
budget:
  run: {maxCost: 2.5, maxTokens: 1000000, maxDuration: 2h}
  story: {maxCost: 0.5}
steps:
  review:
    model: opus-x
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Prices["my-model"]; got != (spend.Price{Input: 3, Output: 15.5, CacheRead: 0.3}) {
		t.Errorf("price %+v", got)
	}
	if p.RunBudget != (spend.Limits{MaxCostUSD: 2.5, MaxTokens: 1_000_000, MaxDuration: 2 * time.Hour}) ||
		p.StoryBudget != (spend.Limits{MaxCostUSD: 0.5}) {
		t.Errorf("budgets %+v %+v", p.RunBudget, p.StoryBudget)
	}
	if p.Steps[StepReview].Model != "opus-x" || p.Steps[StepDev].Model != "" {
		t.Errorf("models %q %q", p.Steps[StepReview].Model, p.Steps[StepDev].Model)
	}
	if d := DefaultPolicy(); !d.RunBudget.IsZero() || !d.StoryBudget.IsZero() || len(d.Prices) != 0 {
		t.Errorf("the defaults set a budget or prices: %+v %+v %v", d.RunBudget, d.StoryBudget, d.Prices)
	}
}

func TestPolicyRefusesBadSpendKeys(t *testing.T) {
	for doc, want := range map[string]string{
		"prices: {m: {input: -1}}":           "prices.m.input",
		"prices: {m: {inputs: 1}}":           "prices.m.inputs",
		"budget: {run: {maxCost: lots}}":     "budget.run.maxCost",
		"budget: {week: {maxCost: 1}}":       "budget.week",
		"budget: {story: {maxTokens: -5}}":   "budget.story.maxTokens",
		"budget: {run: {maxDuration: soon}}": "budget.run.maxDuration",
		"steps: {dev: {model: '  '}}":        "steps.dev.model",
	} {
		_, err := ParsePolicy("w.yaml", []byte(doc))
		if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", doc, err, want)
		}
	}
}
