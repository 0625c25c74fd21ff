package llmenv

import (
	"errors"
	"strings"
	"testing"
)

func TestProvider(t *testing.T) {
	for _, tc := range []struct {
		name, provider, model string
		env                   map[string]string
		wantModel, wantErr    string
	}{
		{name: "none", wantErr: "no model provider"},
		{name: "anthropic from key", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, wantModel: "claude"},
		{name: "GANTRY_MODEL", env: map[string]string{"ANTHROPIC_API_KEY": "k", "GANTRY_MODEL": "m1"}, wantModel: "m1"},
		{name: "flag beats env", model: "m2", env: map[string]string{"ANTHROPIC_API_KEY": "k", "GANTRY_MODEL": "m1"}, wantModel: "m2"},
		{name: "openai from key", env: map[string]string{"OPENAI_API_KEY": "k"}, wantModel: DefaultOpenAIModel},
		{name: "compatible server needs a model", env: map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, wantErr: "needs a model name"},
		{name: "compatible server with a model", model: "qwen", env: map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, wantModel: "qwen"},
		{name: "anthropic without key", provider: "anthropic", wantErr: "ANTHROPIC_API_KEY is not set"},
		{name: "openai without key", provider: "openai", wantErr: "OPENAI_API_KEY is not set"},
		{name: "openai without key, its own URL", provider: "openai", env: map[string]string{"OPENAI_BASE_URL": "https://api.openai.com/v1"}, wantErr: "OPENAI_API_KEY is not set"},
		{name: "openai-compatible without key", provider: "openai", model: "qwen", env: map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, wantModel: "qwen"},
		{name: "unknown", provider: "x", wantErr: "unknown --provider"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, model, err := Provider(tc.provider, tc.model, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if tc.name == "none" && !errors.Is(err, ErrNoProvider) {
					t.Errorf("err = %v, want ErrNoProvider", err)
				}
				return
			}
			if err != nil || p == nil {
				t.Fatalf("Provider: %v", err)
			}
			if !strings.HasPrefix(model, tc.wantModel) {
				t.Errorf("model = %q, want %q…", model, tc.wantModel)
			}
		})
	}
}
