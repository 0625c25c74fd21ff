package openai_test

import (
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/llm/openai"
)

func TestIdleTimeout(t *testing.T) {
	llmtest.RunIdleTimeoutTests(t, func(srv *llmtest.Server, p llm.RetryPolicy) llm.Provider {
		return newProvider(t, srv, &sleeps{}, func(o *openai.Options) { o.Retry = p })
	})
}
