package openai_test

import (
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/llm/openai"
)

// suite describes the adapter to the shared provider suite; newSuiteProvider
// is the one place the suite meets the constructor.
var suite = llmtest.ProviderSuite{
	API:              "openai",
	New:              newSuiteProvider,
	DefaultMaxTokens: openai.DefaultMaxTokens,
	ClientErrors: []llmtest.ClientErrorCase{
		{Reply: llmtest.ErrorReply(400, "invalid_request_error", "Invalid 'messages[2]': tool_call_id not found"), Is: llm.ErrBadRequest},
		{Reply: llmtest.ErrorReply(401, "invalid_api_key", "Incorrect API key provided"), Is: llm.ErrAuth},
		{Reply: llmtest.ErrorReply(404, "model_not_found", "The model `gpt-nope` does not exist"), Is: llm.ErrBadRequest},
		{Reply: llmtest.ErrorReply(400, "context_length_exceeded", "This model's maximum context length is 128000 tokens"), Is: llm.ErrContextLength},
	},
}

func newSuiteProvider(c llmtest.ProviderConfig) llm.Provider {
	return openai.New(openai.Options{
		BaseURL:    c.BaseURL,
		APIKey:     c.APIKey,
		HTTPClient: c.Client,
		LookupEnv:  func(string) (string, bool) { return "", false },
		Retry:      c.Retry,
	})
}

func TestProviderSuite(t *testing.T) { llmtest.RunProviderSuite(t, suite) }

func BenchmarkStream200(b *testing.B) { llmtest.RunStreamBenchmark(b, suite) }
