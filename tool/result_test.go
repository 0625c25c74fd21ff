package tool

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

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

func TestContentAsTextAndIsImage(t *testing.T) {
	tests := []struct {
		c     Content
		text  string
		image bool
	}{
		{Text("hi"), "hi", false},
		{EmbeddedText("file:///t", "text/plain", "body"), "body", false},
		{Audio([]byte("abc"), "audio/wav"), "[audio clip, 3 bytes, audio/wav]", false},
		{Audio([]byte("ab"), ""), "[audio clip, 2 bytes, unknown type]", false},
		{Image([]byte{1, 2}, "image/png"), "[image, 2 bytes, image/png]", true},
		{EmbeddedBlob("file:///p", "image/png", []byte{1}), "[resource file:///p (image/png, 1 bytes)]", true},
		{EmbeddedBlob("file:///b", "application/octet-stream", []byte{1, 2}), "[resource file:///b (application/octet-stream, 2 bytes)]", false},
		{ResourceLink("file:///x", "x", "text/plain"), "[resource link x: file:///x]", false},
		{ResourceLink("file:///y", "", ""), "[resource link file:///y: file:///y]", false},
	}
	for _, tt := range tests {
		if got := tt.c.AsText(); got != tt.text {
			t.Errorf("%+v.AsText() = %q, want %q", tt.c, got, tt.text)
		}
		if got := tt.c.IsImage(); got != tt.image {
			t.Errorf("%+v.IsImage() = %v, want %v", tt.c, got, tt.image)
		}
	}
}

// FuzzRuneCount: the ASCII-stepping count equals the standard library's,
// invalid UTF-8 included.
func FuzzRuneCount(f *testing.F) {
	for _, s := range []string{"", "abc", "abcdefgh", "abcdefghé", "héllo wörld, longer than eight", "\xff\xfe\x80abcdefgh\xe2\x82", strings.Repeat("x", 17) + "€"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := runeCount(s), utf8.RuneCountInString(s); got != want {
			t.Fatalf("runeCount(%q) = %d, want %d", s, got, want)
		}
	})
}

// TestJoinTextOneBlock: one text block is returned as is (no copy), and
// the result is what joining gives in every case.
func TestJoinTextOneBlock(t *testing.T) {
	img := Content{Type: TypeImage, Data: []byte{1}, MIMEType: "image/png"}
	for _, c := range []struct {
		blocks []Content
		want   string
	}{
		{nil, ""},
		{[]Content{Text("a")}, "a"},
		{[]Content{Text("a"), img}, "a"},
		{[]Content{img, Text("a")}, "a"},
		{[]Content{Text("a"), Text("b")}, "a\nb"},
		{[]Content{Text(""), Text("b")}, "b"},
		{[]Content{Text("a"), {Type: TypeResource, Text: "r"}}, "a\nr"},
	} {
		if got := JoinText(c.blocks); got != c.want {
			t.Errorf("JoinText(%v) = %q, want %q", c.blocks, got, c.want)
		}
	}
	big := strings.Repeat("x", 1<<16)
	if got := JoinText([]Content{Text(big)}); unsafe.StringData(got) != unsafe.StringData(big) {
		t.Error("one text block was copied")
	}
}

func BenchmarkTextLen(b *testing.B) {
	blocks := []Content{Text(strings.Repeat("/usr/local/go/src/errors/wrap.go:42:\treturn errors.New(\"x\")\n", 3000))}
	b.SetBytes(int64(len(blocks[0].Text)))
	for b.Loop() {
		TextLen(blocks)
	}
}
