package mcpres

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

type fake struct {
	list  []Resource
	parts []Contents
}

func (f fake) ListResources(_ context.Context, server string) ([]Resource, error) {
	if server == "nope" {
		return nil, ErrUnknownServer
	}
	return f.list, nil
}

func (f fake) ReadResource(context.Context, string, string) ([]Contents, error) { return f.parts, nil }

func byName(name string) tool.Tool {
	for _, t := range Tools() {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}

func TestShapes(t *testing.T) {
	for name, want := range map[string]string{
		"ListMcpResources": `{"type":"object","properties":{"server":{"type":"string","description":"Optional server name to list resources of; all servers when omitted"}},"additionalProperties":false}`,
		"ReadMcpResource":  `"required":["server","uri"]`,
	} {
		s := string(byName(name).Spec().InputSchema)
		if !strings.Contains(s, want) {
			t.Errorf("%s schema = %s", name, s)
		}
		if tr := tool.TraitsOf(byName(name), nil); tr != tool.ReadOnlyTraits {
			t.Errorf("%s traits = %+v", name, tr)
		}
	}
}

func TestCalls(t *testing.T) {
	ctx := context.Background()
	if _, err := byName("ListMcpResources").Call(ctx, &tool.Env{}, json.RawMessage(`{}`)); !errors.Is(err, tool.ErrNoService) {
		t.Fatalf("no service: %v", err)
	}
	dir := t.TempDir()
	f := fake{parts: []Contents{
		{URI: "a://t", MIMEType: "text/plain", Text: "txt"},
		{URI: "a://i", MIMEType: "image/png", Blob: []byte{1}},
		{URI: "a://b", MIMEType: "application/pdf", Blob: []byte("%PDF")},
	}}
	env := &tool.Env{Services: tool.Provide[Resources](&tool.Services{}, f), ToolResultsDir: dir}
	r, err := byName("ListMcpResources").Call(ctx, env, json.RawMessage(`{"server":"x"}`))
	if err != nil || !strings.Contains(r.TextContent(), `No resources found on MCP server "x"`) {
		t.Fatalf("%v %v", r, err)
	}
	if _, err := byName("ListMcpResources").Call(ctx, env, json.RawMessage(`{"server":"nope"}`)); !errors.Is(err, ErrUnknownServer) {
		t.Fatalf("unknown: %v", err)
	}
	r, err = byName("ReadMcpResource").Call(ctx, env, json.RawMessage(`{"server":"../s","uri":"a://x"}`))
	if err != nil || len(r.Content) != 3 {
		t.Fatalf("%+v %v", r, err)
	}
	if r.Content[0].Text != "txt" || r.Content[1].Type != tool.TypeImage {
		t.Errorf("content = %+v", r.Content[:2])
	}
	msg := r.Content[2].Text
	path := msg[strings.LastIndex(msg, " ")+1:]
	if b, err := os.ReadFile(path); err != nil || string(b) != "%PDF" || !strings.HasPrefix(path, dir) || !strings.HasSuffix(path, ".pdf") {
		t.Errorf("saved blob %q: %q %v", path, b, err)
	}
	v := byName("ReadMcpResource").(tool.InputValidator)
	if err := v.ValidateInput(ctx, env, json.RawMessage(`{"server":" ","uri":"a://x"}`)); err == nil {
		t.Error("blank server accepted")
	}
}
