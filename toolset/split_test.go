package toolset

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitNames(t *testing.T) {
	for in, want := range map[string][]string{
		"":                                  nil,
		"Read, Grep":                        {"Read", "Grep"},
		"Read Grep\tGlob\nBash":             {"Read", "Grep", "Glob", "Bash"},
		"Bash(git diff *), Bash(ls -la, x)": {"Bash(git diff *)", "Bash(ls -la, x)"},
		" ,, Edit(src/**) ,":                {"Edit(src/**)"},
		"Bash(a (b) c),Read":                {"Bash(a (b) c)", "Read"},
		"Bash(unclosed, x":                  {"Bash(unclosed, x"},
		"a)b c":                             {"a)b", "c"},
	} {
		if got := SplitNames(in); !slices.Equal(got, want) {
			t.Errorf("SplitNames(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzSplitNames(f *testing.F) {
	f.Add("Read, Bash(git diff *)")
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range SplitNames(s) {
			if r == "" || strings.TrimSpace(r) != r {
				t.Fatalf("bad item %q of %q", r, s)
			}
		}
	})
}
