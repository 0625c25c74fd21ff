package anthropic_test

import (
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
)

func TestIdleTimeout(t *testing.T) {
	llmtest.RunIdleTimeoutTests(t, func(srv *llmtest.Server, p llm.RetryPolicy) llm.Provider {
		return newProvider(t, srv, &sleeps{}, func(o *anthropic.Options) { o.Retry = p })
	})
}
