package spend

import "strings"

// Price is what one model costs, in US dollars per million tokens of each kind.
type Price struct {
	Input      float64 `json:"input" yaml:"input"`
	Output     float64 `json:"output" yaml:"output"`
	CacheRead  float64 `json:"cacheRead" yaml:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite" yaml:"cacheWrite"`
}

// PriceTable maps a model name to its price.
type PriceTable map[string]Price

// PricesDate is when the shipped prices were taken from the vendors' price pages.
const PricesDate = "2025-11-20"

// SimModel is the model the simulated agent reports when no --model is
// given; it has a price so demo runs show what a cost looks like.
const SimModel = "sim"

// DefaultPrices are the shipped prices (see PricesDate); workflow.yaml
// `prices` overrides or adds entries. Cache writes are the 5-minute rate
// where a vendor has several; a vendor without a cache-write price has 0.
func DefaultPrices() PriceTable {
	return PriceTable{
		"claude-opus-4-5":      {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
		"claude-opus-4-1":      {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
		"claude-sonnet-4-5":    {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-sonnet-4":      {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"claude-haiku-4-5":     {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
		"gpt-5":                {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-codex":          {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5.1":              {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5.1-codex":        {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-mini":           {Input: 0.25, Output: 2, CacheRead: 0.025},
		"gemini-2.5-pro":       {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gemini-2.5-flash":     {Input: 0.3, Output: 2.5, CacheRead: 0.03},
		"gemini-3-pro-preview": {Input: 2, Output: 12, CacheRead: 0.2},
		SimModel:               {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	}
}

// With returns a copy of t with over's entries added or replacing t's.
func (t PriceTable) With(over PriceTable) PriceTable {
	out := make(PriceTable, len(t)+len(over))
	for k, v := range t {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// Lookup finds a model's price: the exact name, else the name without a
// dated suffix ("claude-sonnet-4-5-20250929" → "claude-sonnet-4-5").
func (t PriceTable) Lookup(model string) (Price, bool) {
	if p, ok := t[model]; ok {
		return p, true
	}
	if i := strings.LastIndexByte(model, '-'); i > 0 && isDate(model[i+1:]) {
		p, ok := t[model[:i]]
		return p, ok
	}
	return Price{}, false
}

func isDate(s string) bool {
	if len(s) != 8 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Priced returns u with its cost under t for model; a model with no price
// keeps a nil cost.
func (t PriceTable) Priced(u Usage, model string) Usage {
	u.CostUSD = nil
	p, ok := t.Lookup(model)
	if !ok {
		return u
	}
	c := (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead + float64(u.CacheWriteTokens)*p.CacheWrite) / 1e6
	u.CostUSD = roundCost(c)
	return u
}
