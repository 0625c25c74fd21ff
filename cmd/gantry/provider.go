package main

import (
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmenv"
)

// newProvider picks the model provider: the --provider flag, else
// ANTHROPIC_API_KEY → Anthropic, else OPENAI_API_KEY / OPENAI_BASE_URL →
// OpenAI-compatible (see package llmenv). The model is the flag, else
// GANTRY_MODEL, else the provider's default.
func newProvider(a *app, name, model string) (llm.Provider, string, error) {
	return llmenv.Provider(name, model, a.getenv)
}
