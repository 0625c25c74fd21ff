package mcptool

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/tool"
)

func TestConvertContent(t *testing.T) {
	tests := []struct {
		name string
		in   mcp.Content
		want tool.Content
	}{
		{"text", &mcp.TextContent{Text: "hi"}, tool.Text("hi")},
		{"image", &mcp.ImageContent{Data: []byte{0x89, 'P'}, MIMEType: "image/png"}, tool.Image([]byte{0x89, 'P'}, "image/png")},
		{"audio", &mcp.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"}, tool.Audio([]byte("RIFF"), "audio/wav")},
		{"audio without a type", &mcp.AudioContent{Data: []byte{1}}, tool.Audio([]byte{1}, "")},
		{"resource link", &mcp.ResourceLink{URI: "file:///x", Name: "x", Title: "X", Description: "d", MIMEType: "text/plain"},
			tool.Content{Type: tool.TypeResourceLink, URI: "file:///x", Name: "x", Title: "X", Description: "d", MIMEType: "text/plain"}},
		{"embedded text", &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://a", MIMEType: "text/plain", Text: "t"}},
			tool.EmbeddedText("mem://a", "text/plain", "t")},
		{"embedded blob", &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://b", MIMEType: "audio/mpeg", Blob: []byte{7}}},
			tool.EmbeddedBlob("mem://b", "audio/mpeg", []byte{7})},
		{"empty embedded resource", &mcp.EmbeddedResource{}, tool.Text("[empty embedded resource]")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ConvertContent(tt.in)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConvertResultKeepsAudio(t *testing.T) {
	r := ConvertResult(&mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "a tone:"},
		&mcp.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"},
	}})
	if len(r.Content) != 2 || r.Content[1].Type != tool.TypeAudio || string(r.Content[1].Data) != "RIFF" {
		t.Fatalf("content %+v", r.Content)
	}
	if txt := r.TextContent(); strings.Contains(txt, "RIFF") || txt != "a tone:" {
		t.Fatalf("text %q", txt)
	}
}
