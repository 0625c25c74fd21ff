package streamjson

import (
	"strings"
	"testing"
)

func TestProjectSlug(t *testing.T) {
	long := "/" + strings.Repeat("a", 250)
	tests := []struct{ in, want string }{
		{"/home/ada/my project", "-home-ada-my-project"},
		{"/tmp/x.y_z", "-tmp-x-y-z"},
		{"/tmp/é", "-tmp--"},
		{"/tmp/😀", "-tmp---"}, // two UTF-16 code units
		// The SDK's own result for this path (node: the SDK's la()).
		{long, "-" + strings.Repeat("a", 199) + "-feo44x"},
	}
	for _, tt := range tests {
		if got := ProjectSlug(tt.in); got != tt.want {
			t.Errorf("ProjectSlug(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzProjectSlug(f *testing.F) {
	for _, s := range []string{"/a/b", "", "/ü/😀", strings.Repeat("x/", 150)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := ProjectSlug(s)
		if len(got) > maxSlug+1+14 {
			t.Fatalf("ProjectSlug(%q) is %d long", s, len(got))
		}
		for _, c := range got {
			if !(c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				t.Fatalf("ProjectSlug(%q) = %q", s, got)
			}
		}
	})
}
