package spend

import (
	"fmt"
	"time"
)

// Limits are a budget: a run's or one story's. Zero fields are no limit.
type Limits struct {
	MaxCostUSD  float64
	MaxTokens   int64
	MaxDuration time.Duration
}

// IsZero reports a budget with no limit at all.
func (l Limits) IsZero() bool { return l == Limits{} }

// Or returns l with o's limits where l has none.
func (l Limits) Or(o Limits) Limits {
	if l.MaxCostUSD == 0 {
		l.MaxCostUSD = o.MaxCostUSD
	}
	if l.MaxTokens == 0 {
		l.MaxTokens = o.MaxTokens
	}
	if l.MaxDuration == 0 {
		l.MaxDuration = o.MaxDuration
	}
	return l
}

// Limit kinds, as Reached names them.
const (
	LimitCost     = "cost"
	LimitTokens   = "tokens"
	LimitDuration = "duration"
)

// Overrun is a limit reached: which, what was spent and the limit, for people.
type Overrun struct {
	Limit string
	Spent string
	Max   string
}

func (o Overrun) String() string {
	return fmt.Sprintf("%s %s spent of %s", o.Limit, o.Spent, o.Max)
}

// Reached returns the first limit that spent (and elapsed time) reached,
// or nil. A limit is reached when the spend is at it or above.
func (l Limits) Reached(t Total, elapsed time.Duration) *Overrun {
	switch {
	case l.MaxCostUSD > 0 && t.Cost() >= l.MaxCostUSD:
		return &Overrun{Limit: LimitCost, Spent: dollars(t.Cost()), Max: dollars(l.MaxCostUSD)}
	case l.MaxTokens > 0 && t.Tokens() >= l.MaxTokens:
		return &Overrun{Limit: LimitTokens, Spent: fmt.Sprint(t.Tokens()), Max: fmt.Sprint(l.MaxTokens)}
	case l.MaxDuration > 0 && elapsed >= l.MaxDuration:
		return &Overrun{Limit: LimitDuration, Spent: elapsed.Round(time.Second).String(), Max: l.MaxDuration.String()}
	}
	return nil
}

func dollars(c float64) string { return fmt.Sprintf("$%.4f", c) }
