package main

import (
	"fmt"
	"time"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmenv"
)

// newProvider picks the model provider: the --provider flag, else
// ANTHROPIC_API_KEY → Anthropic, else OPENAI_API_KEY / OPENAI_BASE_URL →
// OpenAI-compatible (see package llmenv). The model is the flag, else
// GANTRY_MODEL, else the provider's default.
func newProvider(a *app, name, model string) (llm.Provider, string, error) {
	return newProviderIdle(a, name, model, 0)
}

// newProviderIdle is newProvider with a stream idle timeout (0 =
// llm.DefaultIdleTimeout). Transient failures are retried by the
// provider's policy; each retry is reported on stderr, so that a server
// that accepts and never answers is visible long before the run gives up.
func newProviderIdle(a *app, name, model string, idle time.Duration) (llm.Provider, string, error) {
	retry := llm.RetryPolicy{IdleTimeout: idle, OnRetry: func(attempt int, delay time.Duration, err error) {
		fmt.Fprintf(a.stderr, "gantry: %v; retrying in %s (attempt %d)\n", err, delay.Round(100*time.Millisecond), attempt+1)
	}}
	return llmenv.ProviderOptions(name, model, a.getenv, llmenv.Options{Retry: retry})
}
