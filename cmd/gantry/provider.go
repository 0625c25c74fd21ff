package main

import (
	"errors"
	"fmt"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
)

// errNoProvider is the message for a machine with no model configured.
var errNoProvider = errors.New(`no model provider is configured.
Set one of:
  ANTHROPIC_API_KEY=…                         (Anthropic)
  OPENAI_API_KEY=…                            (OpenAI)
  OPENAI_BASE_URL=http://localhost:11434/v1   (an OpenAI-compatible server, e.g. Ollama; add --model)
or pass --provider anthropic|openai`)

// newProvider picks the model provider: the --provider flag, else
// ANTHROPIC_API_KEY → Anthropic, else OPENAI_API_KEY / OPENAI_BASE_URL →
// OpenAI-compatible. The model is the flag, else GANTRY_MODEL, else the
// provider's default.
func newProvider(a *app, name, model string) (llm.Provider, string, error) {
	if name == "" {
		switch {
		case a.getenv("ANTHROPIC_API_KEY") != "":
			name = "anthropic"
		case a.getenv("OPENAI_API_KEY") != "" || a.getenv("OPENAI_BASE_URL") != "":
			name = "openai"
		default:
			return nil, "", errNoProvider
		}
	}
	if model == "" {
		model = a.getenv("GANTRY_MODEL")
	}
	lookup := func(k string) (string, bool) {
		v := a.getenv(k)
		return v, v != ""
	}
	switch name {
	case "anthropic":
		if a.getenv("ANTHROPIC_API_KEY") == "" {
			return nil, "", errors.New("--provider anthropic: ANTHROPIC_API_KEY is not set")
		}
		if model == "" {
			model = anthropic.DefaultModel
		}
		return anthropic.New(anthropic.WithModel(model), anthropic.WithLookupEnv(lookup)), model, nil
	case "openai":
		return newOpenAI(model, lookup)
	}
	return nil, "", fmt.Errorf("unknown --provider %q (want anthropic or openai)", name)
}
