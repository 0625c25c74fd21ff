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

// streamIdleEnv sets the model stream idle timeout where no flag does.
const streamIdleEnv = "GANTRY_STREAM_IDLE_TIMEOUT"

// newProviderIdle is newProvider with a stream idle timeout (0 =
// llm.DefaultIdleTimeout). Transient failures are retried by the
// provider's policy; each retry is reported on stderr, so that a server
// that accepts and never answers is visible long before the run gives up.
func newProviderIdle(a *app, name, model string, idle time.Duration) (llm.Provider, string, error) {
	if idle == 0 {
		// The setting: GANTRY_STREAM_IDLE_TIMEOUT (a Go duration; "-1s"
		// disables the watchdog).
		if v := a.getenv(streamIdleEnv); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d == 0 {
				return nil, "", fmt.Errorf("%s=%q is not a non-zero duration (e.g. 90s)", streamIdleEnv, v)
			}
			idle = d
		}
	}
	retry := llm.RetryPolicy{IdleTimeout: idle, OnRetry: func(attempt int, delay time.Duration, err error) {
		fmt.Fprintf(a.stderr, "gantry: %v; retrying in %s (attempt %d)\n", err, delay.Round(100*time.Millisecond), attempt+1)
	}}
	return llmenv.ProviderOptions(name, model, a.getenv, llmenv.Options{Retry: retry})
}
