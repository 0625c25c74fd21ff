package main

import (
	"errors"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/openai"
)

// defaultOpenAIModel is the model used against the OpenAI API when none is
// given.
const defaultOpenAIModel = "gpt-5"

// newOpenAI returns the OpenAI Chat Completions provider (OPENAI_API_KEY,
// OPENAI_BASE_URL; the key may be empty for local servers). A server other
// than OpenAI's has no default model: --model or GANTRY_MODEL is required.
func newOpenAI(model string, lookup func(string) (string, bool)) (llm.Provider, string, error) {
	if model == "" {
		if base, ok := lookup("OPENAI_BASE_URL"); ok && base != openai.DefaultBaseURL && base+"/" != openai.DefaultBaseURL {
			return nil, "", errors.New("an OpenAI-compatible server needs a model name: pass --model (or set GANTRY_MODEL)")
		}
		model = defaultOpenAIModel
	}
	return openai.New(openai.WithModel(model), openai.WithLookupEnv(lookup)), model, nil
}
