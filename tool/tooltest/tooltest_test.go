package tooltest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/tool/tooltest"
)

type greetIn struct {
	Name string `json:"name"`
}

// greet fails its input check on an empty name and its call on "fail".
func greet(t *testing.T) tool.Tool {
	t.Helper()
	tl, err := tool.NewText("Greet", "greets", func(ctx context.Context, env *tool.Env, in greetIn) (string, error) {
		if in.Name == "fail" {
			return "", errors.New("cannot greet fail")
		}
		return "hello " + in.Name + " in " + env.WorkDir, nil
	}, tool.ReadOnly(), tool.ValidateFunc(func(ctx context.Context, env *tool.Env, in greetIn) error {
		if in.Name == "" {
			return errors.New("name is required")
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func TestCall(t *testing.T) {
	tl, env := greet(t), &tool.Env{WorkDir: "/w"}
	tests := []struct {
		name    string
		in      any
		want    string
		wantErr bool
	}{
		{"string", `{"name":"ann"}`, "hello ann in /w", false},
		{"bytes", []byte(`{"name":"bo"}`), "hello bo in /w", false},
		{"raw", json.RawMessage(`{"name":"cy"}`), "hello cy in /w", false},
		{"marshalled", greetIn{Name: "di"}, "hello di in /w", false},
		{"input check", map[string]any{}, "name is required", true},
		{"call error", greetIn{Name: "fail"}, "cannot greet fail", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tooltest.Call(t, tl, env, tt.in)
			if r.TextContent() != tt.want || r.IsError != tt.wantErr {
				t.Fatalf("result %q (error %v), want %q (error %v)", r.TextContent(), r.IsError, tt.want, tt.wantErr)
			}
		})
	}
}

func TestRun(t *testing.T) {
	tl, env := greet(t), &tool.Env{WorkDir: "/w"}
	if _, err := tooltest.Run(t.Context(), tl, env, `{}`); err == nil || !strings.Contains(err.Error(), "name is required") {
		t.Fatalf("input check: err %v", err)
	}
	if _, err := tooltest.Run(t.Context(), tl, env, greetIn{Name: "fail"}); err == nil || !strings.Contains(err.Error(), "cannot greet fail") {
		t.Fatalf("call: err %v", err)
	}
	if _, err := tooltest.Run(t.Context(), tl, env, make(chan int)); err == nil {
		t.Fatal("an input that does not marshal: no error")
	}
	r, err := tooltest.Run(t.Context(), tl, env, greetIn{Name: "ed"})
	if err != nil || r.TextContent() != "hello ed in /w" {
		t.Fatalf("Run = %v, %v", r, err)
	}
}

func TestCallContextCancelled(t *testing.T) {
	tl, err := tool.NewText("Wait", "waits for cancellation", func(ctx context.Context, env *tool.Env, in struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}, tool.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if r := tooltest.CallContext(ctx, t, tl, &tool.Env{}, `{}`); !r.IsError || !strings.Contains(r.TextContent(), "canceled") {
		t.Fatalf("result %q (error %v), want the cancellation", r.TextContent(), r.IsError)
	}
}
