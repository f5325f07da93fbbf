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

// PricesDate is when the shipped prices were taken: Claude Code 2.1.328's
// own model table (each model's pricing tier, read from the pinned CLI's
// bundle; its cost-state agrees: 3,600 input, 180 output, 900 cache-read and
// 120 cache-write tokens of claude-opus-5-5 cost $0.01878).
const PricesDate = "2026-11-25"

// SimModel is the model the simulated agent reports when no --model is
// given; it has a price so demo runs show what a cost looks like.
const SimModel = "sim" // a model name, not an agent name

// DefaultPrices are the shipped prices (see PricesDate): every Claude model
// Claude Code 2.1.328 knows, at its 5-minute cache-write rate (a one-hour
// cache write costs more), and below any long-prompt surcharge. The pinned
// Codex and Gemini CLIs carry no prices, so their models have none here: such
// a model shows its tokens with costUsd null until workflow.yaml `prices`
// names it.
func DefaultPrices() PriceTable {
	t := PriceTable{SimModel: {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}
	for model, tier := range claudeModelTiers {
		t[model] = claudeTiers[tier]
	}
	// The dated ids of the first Claude 4 models drop to these names.
	t["claude-opus-4"], t["claude-sonnet-4"] = t["claude-opus-4-0"], t["claude-sonnet-4-0"]
	return t
}

// claudeTiers are Claude Code 2.1.328's pricing tiers (USD per million tokens).
var claudeTiers = map[string]Price{
	"haiku_35":                   {Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1},
	"haiku_45":                   {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
	"haiku_55":                   {Input: 0.1, Output: 0.5, CacheRead: 0.01, CacheWrite: 0.125}, // more above 100k prompt tokens
	"tier_2_10":                  {Input: 2, Output: 10, CacheRead: 0.2, CacheWrite: 2.5},
	"tier_2_10_cache_read_0_10":  {Input: 2, Output: 10, CacheRead: 0.1, CacheWrite: 2.5},
	"tier_3_15":                  {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"tier_4_20_cache_read_0_20":  {Input: 4, Output: 20, CacheRead: 0.2, CacheWrite: 5},
	"tier_5_25":                  {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
	"tier_8_40_cache_read_0_20":  {Input: 8, Output: 40, CacheRead: 0.2, CacheWrite: 10},
	"tier_10_50":                 {Input: 10, Output: 50, CacheRead: 1, CacheWrite: 12.5},
	"tier_10_50_cache_read_0_25": {Input: 10, Output: 50, CacheRead: 0.25, CacheWrite: 12.5},
	"tier_15_75":                 {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
}

// claudeModelTiers is each model's tier in Claude Code 2.1.328.
var claudeModelTiers = map[string]string{
	"claude-3-5-haiku": "haiku_35", "claude-3-5-sonnet": "tier_3_15", "claude-3-7-sonnet": "tier_3_15",
	"claude-fable-5": "tier_10_50", "claude-fable-5-1": "tier_10_50_cache_read_0_25", "claude-fable-5-2": "tier_8_40_cache_read_0_20",
	"claude-haiku-4-5": "haiku_45", "claude-haiku-5-5": "haiku_55",
	"claude-mythos-5": "tier_10_50", "claude-mythos-5-1": "tier_10_50_cache_read_0_25", "claude-mythos-5-2": "tier_8_40_cache_read_0_20",
	"claude-opus-4-0": "tier_15_75", "claude-opus-4-1": "tier_15_75", "claude-opus-4-5": "tier_5_25", "claude-opus-4-6": "tier_5_25",
	"claude-opus-4-7": "tier_5_25", "claude-opus-4-8": "tier_5_25", "claude-opus-5": "tier_5_25", "claude-opus-5-5": "tier_4_20_cache_read_0_20",
	"claude-sonnet-4-0": "tier_3_15", "claude-sonnet-4-5": "tier_3_15", "claude-sonnet-4-6": "tier_3_15",
	"claude-sonnet-5": "tier_2_10", "claude-sonnet-5-5": "tier_2_10_cache_read_0_10",
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
