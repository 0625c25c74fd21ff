package anthropic_test

import (
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
)

// suite describes the adapter to the shared provider suite; newSuiteProvider
// is the one place the suite meets the constructor.
var suite = llmtest.ProviderSuite{
	API:              "anthropic",
	New:              newSuiteProvider,
	DefaultMaxTokens: anthropic.DefaultMaxTokens,
	ClientErrors: []llmtest.ClientErrorCase{
		{Reply: llmtest.ErrorReply(400, "invalid_request_error", "messages.1: tool_use ids must be unique"), Is: llm.ErrBadRequest},
		{Reply: llmtest.ErrorReply(401, "authentication_error", "invalid x-api-key"), Is: llm.ErrAuth},
		{Reply: llmtest.ErrorReply(403, "permission_error", "no access to model"), Is: llm.ErrAuth},
		{Reply: llmtest.ErrorReply(404, "not_found_error", "model: claude-nope"), Is: llm.ErrBadRequest},
		{Reply: llmtest.ErrorReply(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"), Is: llm.ErrContextLength},
	},
}

func newSuiteProvider(c llmtest.ProviderConfig) llm.Provider {
	return anthropic.New(anthropic.Options{
		BaseURL:    c.BaseURL,
		APIKey:     c.APIKey,
		HTTPClient: c.Client,
		LookupEnv:  func(string) (string, bool) { return "", false },
		Retry:      c.Retry,
	})
}

func TestProviderSuite(t *testing.T) { llmtest.RunProviderSuite(t, suite) }

func BenchmarkStream200(b *testing.B) { llmtest.RunStreamBenchmark(b, suite) }
