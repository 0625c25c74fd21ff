// Package llmenv picks a model provider from the environment, the way the
// gantry and gantry-temporal commands do: an explicit provider name, else
// ANTHROPIC_API_KEY → Anthropic, else OPENAI_API_KEY / OPENAI_BASE_URL → an
// OpenAI-compatible server.
package llmenv

import (
	"errors"
	"fmt"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/openai"
)

// DefaultOpenAIModel is the model used against the OpenAI API when none is
// given.
const DefaultOpenAIModel = "gpt-5"

// ErrNoProvider is returned when the environment configures no provider;
// its message says how to set one up.
var ErrNoProvider = errors.New(`no model provider is configured.
Set one of:
  ANTHROPIC_API_KEY=…                         (Anthropic)
  OPENAI_API_KEY=…                            (OpenAI)
  OPENAI_BASE_URL=http://localhost:11434/v1   (an OpenAI-compatible server, e.g. Ollama; add --model)
or pass --provider anthropic|openai`)

// Provider returns the provider named name ("" = from the environment, as
// the package doc says) and the model: model, else GANTRY_MODEL, else the
// provider's default. getenv reads the environment (keys and base URLs
// are read through it, never from the process directly). An
// OpenAI-compatible server other than OpenAI's has no default model.
func Provider(name, model string, getenv func(string) string) (llm.Provider, string, error) {
	return ProviderOptions(name, model, getenv, Options{})
}

// Options are the optional settings of [ProviderOptions]; the zero value
// is the adapters' defaults.
type Options struct {
	// Retry is the adapter's retry policy (the zero value: llm's default
	// policy); its OnRetry lets a command report each retry.
	Retry llm.RetryPolicy
}

// ProviderOptions is [Provider] with options.
func ProviderOptions(name, model string, getenv func(string) string, o Options) (llm.Provider, string, error) {
	if name == "" {
		switch {
		case getenv("ANTHROPIC_API_KEY") != "":
			name = "anthropic"
		case getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "":
			name = "openai"
		default:
			return nil, "", ErrNoProvider
		}
	}
	if model == "" {
		model = getenv("GANTRY_MODEL")
	}
	lookup := func(k string) (string, bool) {
		v := getenv(k)
		return v, v != ""
	}
	switch name {
	case "anthropic":
		if getenv("ANTHROPIC_API_KEY") == "" {
			return nil, "", errors.New("--provider anthropic: ANTHROPIC_API_KEY is not set")
		}
		if model == "" {
			model = anthropic.DefaultModel
		}
		return anthropic.New(anthropic.Options{Model: model, LookupEnv: lookup, Retry: o.Retry}), model, nil
	case "openai":
		// OpenAI's own API needs a key (an OpenAI-compatible server
		// elsewhere, such as Ollama, may not).
		if base := getenv("OPENAI_BASE_URL"); getenv("OPENAI_API_KEY") == "" && (base == "" || base == openai.DefaultBaseURL || base+"/" == openai.DefaultBaseURL) {
			return nil, "", errors.New("--provider openai: OPENAI_API_KEY is not set (or set OPENAI_BASE_URL for an OpenAI-compatible server)")
		}
		if model == "" {
			if base, ok := lookup("OPENAI_BASE_URL"); ok && base != openai.DefaultBaseURL && base+"/" != openai.DefaultBaseURL {
				return nil, "", errors.New("an OpenAI-compatible server needs a model name: pass --model (or set GANTRY_MODEL)")
			}
			model = DefaultOpenAIModel
		}
		return openai.New(openai.Options{Model: model, LookupEnv: lookup, Retry: o.Retry}), model, nil
	}
	return nil, "", fmt.Errorf("unknown --provider %q (want anthropic or openai)", name)
}
