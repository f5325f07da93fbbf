// Package spend is what an agent session cost: the tokens its CLI reports in
// its own records, priced per model, summed, and held against budgets.
package spend

import (
	"fmt"
	"math"
	"strings"
)

// Usage is the tokens of one attempt (or a sum of attempts), in four kinds:
// input not read from a cache, output (reasoning included), cache reads and
// cache writes. CostUSD is nil when no price is known for the model.
type Usage struct {
	InputTokens      int64    `json:"inputTokens"`
	OutputTokens     int64    `json:"outputTokens"`
	CacheReadTokens  int64    `json:"cacheReadTokens"`
	CacheWriteTokens int64    `json:"cacheWriteTokens"`
	CostUSD          *float64 `json:"costUsd"`
}

// Tokens is the sum of the four kinds: what --max-tokens counts.
func (u Usage) Tokens() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// IsZero reports whether no token was counted.
func (u Usage) IsZero() bool { return u.Tokens() == 0 }

// add adds o's tokens (not its cost) to u.
func (u *Usage) add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
}

// Total sums the usage of many attempts. Its cost is the sum of the priced
// ones; Unpriced counts attempts with tokens but no price (their cost is
// then missing from CostUSD, never guessed), Unread those whose usage could
// not be read at all. CostUSD is nil when nothing was priced.
type Total struct {
	Usage
	Attempts int `json:"attempts"`
	Unpriced int `json:"unpricedAttempts,omitempty"`
	Unread   int `json:"unreadAttempts,omitempty"`
}

// Add counts one attempt: u nil means its usage could not be read.
func (t *Total) Add(u *Usage) {
	t.Attempts++
	if u == nil {
		t.Unread++
		return
	}
	t.add(*u)
	switch {
	case u.CostUSD != nil:
		c := *u.CostUSD
		if t.CostUSD != nil {
			c += *t.CostUSD
		}
		t.CostUSD = roundCost(c)
	case !u.IsZero():
		t.Unpriced++
	}
}

// Merge adds another total to t.
func (t *Total) Merge(o Total) {
	t.Attempts += o.Attempts
	t.Unpriced += o.Unpriced
	t.Unread += o.Unread
	t.add(o.Usage)
	if o.CostUSD != nil {
		c := *o.CostUSD
		if t.CostUSD != nil {
			c += *t.CostUSD
		}
		t.CostUSD = roundCost(c)
	}
}

// Cost is the total's cost in dollars, 0 when nothing was priced.
func (t Total) Cost() float64 {
	if t.CostUSD == nil {
		return 0
	}
	return *t.CostUSD
}

// roundCost keeps costs to a millionth of a dollar, so sums of many small
// floats print and compare as people expect.
func roundCost(c float64) *float64 {
	r := math.Round(c*1e6) / 1e6
	return &r
}

// FormatCost prints a cost for people: "$0.0125", or "—" when unknown.
func FormatCost(c *float64) string {
	if c == nil {
		return "—"
	}
	switch {
	case *c == 0:
		return "$0"
	case *c < 0.01:
		return fmt.Sprintf("$%.4f", *c)
	default:
		return fmt.Sprintf("$%.2f", *c)
	}
}

// FormatTokens prints a token count for people: 950, 12.3k, 4.56M.
func FormatTokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e3), "0"), ".") + "k"
	default:
		return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.2f", float64(n)/1e6), "0"), ".") + "M"
	}
}
