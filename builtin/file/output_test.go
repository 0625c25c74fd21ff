package file

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseHunks(t *testing.T) {
	tests := []struct {
		old, new string
		want     []Hunk
	}{
		{"a\nb\nc\n", "a\nB\nc\n", []Hunk{{OldStart: 1, OldLines: 3, NewStart: 1, NewLines: 3, Lines: []string{" a", "-b", "+B", " c"}}}},
		{"", "x\n", []Hunk{{OldStart: 0, OldLines: 0, NewStart: 1, NewLines: 1, Lines: []string{"+x"}}}},
		{"x", "y", []Hunk{{OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 1,
			Lines: []string{"-x", `\ No newline at end of file`, "+y", `\ No newline at end of file`}}}},
		{"same\n", "same\n", []Hunk{}},
	}
	for _, tt := range tests {
		got := ParseHunks(UnifiedDiff("f", tt.old, tt.new))
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseHunks(diff %q → %q) = %+v, want %+v", tt.old, tt.new, got, tt.want)
		}
	}
	// Two hunks far apart.
	old := strings.Repeat("l\n", 20)
	newText := "first\n" + strings.Repeat("l\n", 18) + "last\n"
	if got := ParseHunks(UnifiedDiff("f", old, newText)); len(got) != 2 || got[0].OldStart != 1 || got[1].OldStart != 16 {
		t.Errorf("two hunks: %+v", got)
	}
}

func FuzzParseHunks(f *testing.F) {
	f.Add("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
	f.Add("@@ -0,0 +1 @@\n+x\n")
	f.Add("@@ -a,b +c,d @@\n")
	f.Add("@@ -1 +1 @@\n-x\n\\ No newline at end of file\n… diff truncated (3 more lines)\n")
	f.Fuzz(func(t *testing.T, diff string) {
		for _, h := range ParseHunks(diff) {
			if h.OldStart < 0 || h.OldLines < 0 || h.NewStart < 0 || h.NewLines < 0 || h.Lines == nil {
				t.Fatalf("bad hunk %+v", h)
			}
		}
	})
}

func TestTextReadJSON(t *testing.T) {
	tr := TextRead{FilePath: "/w/a.txt", StartLine: 2, NumLines: 2, TotalLines: 3, numbered: "     2\tbeta\n     3\tga\tmma\n"}
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"text","file":{"filePath":"/w/a.txt","content":"beta\nga\tmma","numLines":2,"startLine":2,"totalLines":3}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
