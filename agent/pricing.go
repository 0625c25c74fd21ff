package agent

import (
	"maps"
	"strings"
)

// Price is a model's price in US dollars per million tokens.
type Price struct {
	Input      float64 // uncached input tokens
	Output     float64 // output tokens (thinking included)
	CacheWrite float64 // input tokens written to the prompt cache
	CacheRead  float64 // input tokens read from the prompt cache
}

// TokenCounts are the token figures a price applies to.
type TokenCounts struct {
	Input, Output, CacheWrite, CacheRead int64
}

// Cost returns the cost in USD of the counts at price p.
func (p Price) Cost(c TokenCounts) float64 {
	return (float64(c.Input)*p.Input + float64(c.Output)*p.Output +
		float64(c.CacheWrite)*p.CacheWrite + float64(c.CacheRead)*p.CacheRead) / 1e6
}

// PriceTable maps model-name prefixes to prices. The longest matching prefix
// wins, so "claude-sonnet-4-5-20250929" finds "claude-sonnet-4-5".
type PriceTable map[string]Price

// Lookup returns the price of model and whether it is known. It allocates
// nothing (it runs after every turn of every session).
func (t PriceTable) Lookup(model string) (Price, bool) {
	best, found := "", false
	for k := range t {
		if !hasPrefixFold(model, k) {
			continue
		}
		if !found || len(k) > len(best) || len(k) == len(best) && k < best {
			best, found = k, true
		}
	}
	if !found {
		return Price{}, false
	}
	return t[best], true
}

// hasPrefixFold reports whether s starts with prefix, ignoring case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// DefaultPrices returns a copy of the list prices (USD per million tokens)
// of the models Gantry knows, as published by the providers in 2025–2026,
// for callers to extend (Options.Prices); a model missing from the table
// costs 0 and budgets in USD do not apply to it (token budgets still do).
// Agents without Options.Prices share one table, which is never modified.
func DefaultPrices() PriceTable { return maps.Clone(defaultPrices) }

// defaultPrices is the table behind [DefaultPrices], shared read-only.
var defaultPrices = func() PriceTable {
	return PriceTable{
		// Anthropic: cache writes (5 min) at 1.25× input, reads at 0.1×.
		"claude-opus-4-5":   {Input: 5, Output: 25, CacheWrite: 6.25, CacheRead: 0.5},
		"claude-opus-4-1":   {Input: 15, Output: 75, CacheWrite: 18.75, CacheRead: 1.5},
		"claude-opus-4":     {Input: 15, Output: 75, CacheWrite: 18.75, CacheRead: 1.5},
		"claude-sonnet-4":   {Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.3},
		"claude-3-7-sonnet": {Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.3},
		"claude-haiku-4":    {Input: 1, Output: 5, CacheWrite: 1.25, CacheRead: 0.1},
		"claude-3-5-haiku":  {Input: 0.8, Output: 4, CacheWrite: 1, CacheRead: 0.08},
		// OpenAI: cached input tokens are billed at the cache-read price.
		"gpt-5-nano":   {Input: 0.05, Output: 0.4, CacheRead: 0.005},
		"gpt-5-mini":   {Input: 0.25, Output: 2, CacheRead: 0.025},
		"gpt-5":        {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-4.1-nano": {Input: 0.1, Output: 0.4, CacheRead: 0.025},
		"gpt-4.1-mini": {Input: 0.4, Output: 1.6, CacheRead: 0.1},
		"gpt-4.1":      {Input: 2, Output: 8, CacheRead: 0.5},
		"gpt-4o-mini":  {Input: 0.15, Output: 0.6, CacheRead: 0.075},
		"gpt-4o":       {Input: 2.5, Output: 10, CacheRead: 1.25},
		"o4-mini":      {Input: 1.1, Output: 4.4, CacheRead: 0.275},
		"o3":           {Input: 2, Output: 8, CacheRead: 0.5},
	}
}()
