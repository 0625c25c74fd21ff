package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFixtures exercises the fixture server with the Go SDK's client, so
// that it is tested without the npm peers too.
func TestFixtures(t *testing.T) {
	url := serve(t)
	var mu sync.Mutex
	var progress []float64
	var logs int
	c := mcp.NewClient(&mcp.Implementation{Name: "fixture-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Progress)
			mu.Unlock()
		},
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) {
			mu.Lock()
			logs++
			mu.Unlock()
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "pong"}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "u", "email": "e@x"}}, nil
		},
	})
	ctx := context.Background()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  map[string]any
		isErr bool
		want  string // in the JSON of the content
	}{
		{"test_simple_text", nil, false, "simple text response"},
		{"test_image_content", nil, false, `"mimeType":"image/png"`},
		{"test_audio_content", nil, false, `"type":"audio"`},
		{"test_embedded_resource", nil, false, "test://embedded-resource"},
		{"test_multiple_content_types", nil, false, "test://mixed-content-resource"},
		{"test_tool_with_logging", nil, false, "executed"},
		{"test_tool_with_progress", nil, false, "executed"},
		{"test_error_handling", nil, true, "intentionally returns an error"},
		{"test_sampling", map[string]any{"prompt": "ping"}, false, "LLM response: pong"},
		{"test_elicitation", map[string]any{"message": "who?"}, false, `action=accept`},
		{"json_schema_2020_12_tool", map[string]any{"name": "n", "address": map[string]any{"city": "c"}}, false, `\"city\":\"c\"`},
		{"json_schema_2020_12_tool", map[string]any{"extra": 1}, true, "extra"},
		{"test_reconnection", nil, false, "Reconnection test completed"},
	} {
		p := &mcp.CallToolParams{Name: tc.name, Arguments: tc.args}
		p.SetProgressToken(tc.name)
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, _ := res.MarshalJSON()
		if res.IsError != tc.isErr || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: isError=%v %s, want %v %q", tc.name, res.IsError, b, tc.isErr, tc.want)
		}
	}
	// Notifications are handled asynchronously by the client.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(progress) + logs
		mu.Unlock()
		if n >= 6 {
			break
		}
	}
	mu.Lock()
	if len(progress) != 3 || progress[0] != 0 || progress[1] != 50 || progress[2] != 100 {
		t.Errorf("progress = %v", progress)
	}
	if logs != 3 {
		t.Errorf("%d log messages", logs)
	}
	mu.Unlock()

	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://template/42/data"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, `"Data for ID: 42"`) {
		t.Fatalf("template: %v %+v", err, rr)
	}
	cr, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
		Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "par"}})
	if err != nil || strings.Join(cr.Completion.Values, ",") != "paris,park,party" {
		t.Fatalf("complete: %v %+v", err, cr)
	}
}
