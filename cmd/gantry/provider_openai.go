package main

import (
	"errors"

	"github.com/gantry-dev/gantry/llm"
)

// newOpenAI is replaced by the llm/openai adapter as soon as it lands.
func newOpenAI(model string, lookup func(string) (string, bool)) (llm.Provider, string, error) {
	return nil, "", errors.New("the OpenAI provider is not available in this build yet")
}
