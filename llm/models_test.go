package llm_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/llm/openai"
)

// TestListModels: both adapters list the fake server's models through
// their SDKs, also behind WithFallbackModel; a provider that cannot list
// gives ErrNoModelList.
func TestListModels(t *testing.T) {
	srv := llmtest.NewServer(t)
	want := []llm.ModelInfo{{ID: "claude-opus-4-1", DisplayName: "Claude Opus 4.1"}, {ID: "claude-haiku-4-5", DisplayName: "Claude Haiku 4.5"}}
	srv.SetModels(want...)
	env := func(string) (string, bool) { return "", false }
	ant := anthropic.New(anthropic.Options{APIKey: "k", BaseURL: srv.URL(), LookupEnv: env, HTTPClient: srv.Client()})
	oai := openai.New(openai.Options{APIKey: "k", BaseURL: srv.OpenAIURL(), LookupEnv: env, HTTPClient: srv.Client()})
	noNames := []llm.ModelInfo{{ID: "claude-opus-4-1"}, {ID: "claude-haiku-4-5"}}
	for _, tc := range []struct {
		name string
		p    llm.Provider
		want []llm.ModelInfo
	}{
		{"anthropic", ant, want},
		{"anthropic with fallback", llm.WithFallbackModel(ant, "other"), want},
		{"openai", oai, noNames},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := llm.ListModels(context.Background(), tc.p)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("ListModels = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	plain := llm.ProviderFunc(func(context.Context, *llm.Request) iter.Seq2[llm.Event, error] { return nil })
	if _, err := llm.ListModels(context.Background(), plain); !errors.Is(err, llm.ErrNoModelList) {
		t.Errorf("ListModels(ProviderFunc) error = %v", err)
	}
	if _, err := llm.ListModels(context.Background(), llm.WithFallbackModel(plain, "x")); !errors.Is(err, llm.ErrNoModelList) {
		t.Errorf("ListModels(fallback of ProviderFunc) error = %v", err)
	}
}
