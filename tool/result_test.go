package tool

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestContentJSON(t *testing.T) {
	tests := []struct {
		name string
		c    Content
		want string
	}{
		{"text", Text("hi"), `{"type":"text","text":"hi"}`},
		{"image", Image([]byte{0x89, 'P'}, "image/png"), `{"type":"image","data":"iVA=","mime_type":"image/png"}`},
		{"audio", Audio([]byte("RIFF"), "audio/wav"), `{"type":"audio","data":"UklGRg==","mime_type":"audio/wav"}`},
		{"resource link", ResourceLink("file:///a", "a", "text/plain"), `{"type":"resource_link","mime_type":"text/plain","uri":"file:///a","name":"a"}`},
		{"embedded blob", EmbeddedBlob("mem://x", "audio/mpeg", []byte{1}), `{"type":"resource","data":"AQ==","mime_type":"audio/mpeg","uri":"mem://x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.c)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Fatalf("json %s, want %s", b, tt.want)
			}
			var back Content
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.c, back); diff != "" {
				t.Fatalf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAudioIsNotText(t *testing.T) {
	a := Audio([]byte("RIFF...."), "audio/wav")
	if a.Type != TypeAudio || TypeAudio != "audio" || string(a.Data) != "RIFF...." || a.MIMEType != "audio/wav" {
		t.Fatalf("Audio = %+v", a)
	}
	r := &Result{Content: []Content{Text("one"), a, Text("two")}}
	if got := r.TextContent(); got != "one\ntwo" {
		t.Fatalf("TextContent = %q", got)
	}
	if n := TextLen([]Content{a}); n != 0 {
		t.Fatalf("TextLen(audio) = %d", n)
	}
}
