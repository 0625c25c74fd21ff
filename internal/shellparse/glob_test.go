package shellparse

import "testing"

// TestBracketWord: a lone '[' (the test command) is a literal word; a word
// holding a bracket expression is a glob. A literal '[' must not make the
// directories of later commands unknown.
func TestBracketWord(t *testing.T) {
	for src, glob := range map[string]bool{
		"[ 1 = 1 ]": false, "ls [ab]*": true, "ls x[": false, "ls 'a]'[": true, "echo [": false, `ls a["]"]`: true,
	} {
		s, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		ws := s.Commands[0].Words
		last := ws[len(ws)-1]
		if src == "[ 1 = 1 ]" {
			last = ws[0]
		}
		if last.Glob != glob {
			t.Errorf("%s: word %q Glob = %v, want %v", src, last.Text, last.Glob, glob)
		}
	}
	for _, src := range []string{"[ 1 = 1 ] && echo a > f", "if [ -f x ]; then echo a >> f; fi"} {
		a := Analyze(src)
		for i, w := range a.RedirectWhere {
			if w.Unknown {
				t.Errorf("%s: redirect %d in an unknown directory", src, i)
			}
		}
	}
}
