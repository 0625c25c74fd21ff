package textutil

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 5, ""},
		{"hello", 5, "hello"},
		{"hello", 6, "hello"},
		{"hello!", 5, "hell…"},
		{"hello", 1, "…"},
		{"hello", 0, ""},
		{"hello", -3, ""},
		{"h", 1, "h"},
		{"héllo wörld", 5, "héll…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"日本語", 3, "日本語"},
		{"👍🏽👍🏽", 3, "👍🏽…"}, // two code points each: cut between them, never inside one
		{"ab\xffcd", 4, "ab\xff…"},
		{"\xff\xfe\xfd", 2, "\xff…"},
	} {
		if got := Truncate(tc.s, tc.n); got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestHead(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
		cut  bool
	}{
		{"", 0, "", false},
		{"abc", 0, "", true},
		{"abc", 3, "abc", false},
		{"abcd", 3, "abc", true},
		{"ééé", 2, "éé", true},
		{"ééé", 3, "ééé", false},
		{"ééé", 4, "ééé", false},
		{"abc", -1, "", true},
	} {
		got, cut := Head(tc.s, tc.n)
		if got != tc.want || cut != tc.cut {
			t.Errorf("Head(%q, %d) = %q, %v; want %q, %v", tc.s, tc.n, got, cut, tc.want, tc.cut)
		}
	}
}

func TestOneLine(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"  a\n\tb  c \r\n", 10, "a b c"},
		{"first line\nsecond line", 12, "first line …"},
		{"\n\n", 5, ""},
		{"ü ü ü ü", 5, "ü ü …"},
	} {
		if got := OneLine(tc.s, tc.n); got != tc.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func FuzzTruncate(f *testing.F) {
	for _, s := range []string{"", "a", "hello world", "héllo", "日本語のテキスト", "👍🏽👍🏽", "ab\xffcd", "\xf0\x9f", "a\nb\tc"} {
		for _, n := range []int{0, 1, 2, 3, 5, 80} {
			f.Add(s, n)
		}
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n > 1<<20 || n < -1<<20 {
			n %= 1 << 20
		}
		got := Truncate(s, n)
		runes := utf8.RuneCountInString(s)
		switch {
		case n <= 0:
			if got != "" {
				t.Fatalf("Truncate(%q, %d) = %q, want empty", s, n, got)
			}
			return
		case runes <= n:
			if got != s {
				t.Fatalf("Truncate(%q, %d) = %q, want s unchanged", s, n, got)
			}
			return
		}
		if c := utf8.RuneCountInString(got); c != n {
			t.Fatalf("Truncate(%q, %d) = %q has %d runes, want %d", s, n, got, c, n)
		}
		head, ok := strings.CutSuffix(got, Ellipsis)
		if !ok || !strings.HasPrefix(s, head) {
			t.Fatalf("Truncate(%q, %d) = %q is not a prefix of s and an ellipsis", s, n, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Truncate(%q, %d) = %q cut a character in half", s, n, got)
		}
		// The cut falls where a range loop starts a rune.
		if rest := s[len(head):]; len(rest) > 0 && head != "" {
			boundary := false
			for i := range s {
				if i == len(head) {
					boundary = true
					break
				}
			}
			if !boundary {
				t.Fatalf("Truncate(%q, %d) cut at byte %d, not a rune boundary", s, n, len(head))
			}
		}
		if one := OneLine(s, n); utf8.RuneCountInString(one) > n || strings.ContainsAny(one, "\n\t\r") {
			t.Fatalf("OneLine(%q, %d) = %q is not one line of at most %d runes", s, n, one, n)
		}
	})
}

func BenchmarkTruncate(b *testing.B) {
	long := strings.Repeat("héllo wörld ", 100_000)
	b.ReportAllocs()
	for b.Loop() {
		_ = Truncate(long, 300)
	}
}
