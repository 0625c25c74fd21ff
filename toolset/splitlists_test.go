package toolset

import (
	"slices"
	"testing"
)

func TestSplitNameLists(t *testing.T) {
	tests := []struct {
		in   []string
		want []string
	}{
		{[]string{"Read,Glob"}, []string{"Read", "Glob"}},
		{[]string{"Read Glob", "Bash(git diff *)"}, []string{"Read", "Glob", "Bash(git diff *)"}},
		{[]string{"Bash(echo a,b),Read"}, []string{"Bash(echo a,b)", "Read"}},
		{[]string{"Bash(npm run test:*) , WebFetch(domain:x.io)"}, []string{"Bash(npm run test:*)", "WebFetch(domain:x.io)"}},
		{[]string{"", " , "}, nil},
		{[]string{"Bash(unclosed"}, []string{"Bash(unclosed"}},
	}
	for _, tt := range tests {
		if got := SplitNameLists(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("SplitNameLists(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
