package wildcard

import (
	"regexp"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	q, esc := Options{Question: true}, Options{Escapes: true}
	for _, tc := range []struct {
		pat, text string
		o         Options
		want      bool
	}{
		{"", "", Options{}, true},
		{"", "a", Options{}, false},
		{"*", "", Options{}, true},
		{"*", "any text / with slashes", Options{}, true},
		{"git *", "git log --oneline", Options{}, true},
		{"git *", "git", Options{}, false},
		{"git * --force", "git push origin --force", Options{}, true},
		{"git * --force", "git push origin --force-with-lease", Options{}, false},
		{"a*b*c", "aXbYc", Options{}, true},
		{"a*b*c", "aXbY", Options{}, false},
		{"**a", "bba", Options{}, true},
		{"mcp__*", "mcp__srv__tool", q, true},
		{"Read?", "Reads", q, true},
		{"Read?", "Read", q, false},
		{"Read?", "Read?", Options{}, true}, // ? literal without Question
		{"Read?", "Reads", Options{}, false},
		{"?", "é", q, true},
		{"??", "é", q, false},
		{"*?x", "éx", q, true},
		{`echo \*`, "echo *", esc, true},
		{`echo \*`, "echo hi", esc, false},
		{`echo \*`, `echo \hi`, Options{}, true}, // backslash literal, star wild
		{`a\`, `a\`, esc, true},
		{"日本*", "日本語", Options{}, true},
		{"*語", "日本語", Options{}, true},
	} {
		if got := Match(tc.pat, tc.text, tc.o); got != tc.want {
			t.Errorf("Match(%q, %q, %+v) = %v, want %v", tc.pat, tc.text, tc.o, got, tc.want)
		}
	}
}

// FuzzMatch checks Match against a regular expression built from the same
// pattern.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"git *", "git log"}, {"a*b?c", "axxbyc"}, {`\*x`, "*x"}, {"*", ""}, {"?é*", "aé"}, {"**a*", "bab"}} {
		f.Add(s[0], s[1], true, true)
		f.Add(s[0], s[1], false, false)
	}
	f.Fuzz(func(t *testing.T, pat, text string, question, escapes bool) {
		if len(pat) > 64 || len(text) > 256 {
			return
		}
		o := Options{Question: question, Escapes: escapes}
		var re strings.Builder
		re.WriteString(`(?s)\A`)
		for i := 0; i < len(pat); {
			c, w, lit := token(pat, i, o)
			switch {
			case !lit && c == '*':
				re.WriteString(`.*`)
			case !lit && c == '?':
				re.WriteString(`(?:.|[\x80-\xff])`)
			default:
				re.WriteString(regexp.QuoteMeta(string([]byte{c})))
			}
			i += w
		}
		re.WriteString(`\z`)
		rx, err := regexp.Compile(re.String())
		if err != nil {
			return // a lone byte of a broken UTF-8 sequence; regexp cannot express it
		}
		if got, want := Match(pat, text, o), rx.MatchString(text); got != want {
			t.Fatalf("Match(%q, %q, %+v) = %v, regexp %s says %v", pat, text, o, got, re.String(), want)
		}
	})
}

func BenchmarkMatch(b *testing.B) {
	pat := strings.Repeat("*a", 20) + "b"
	text := strings.Repeat("a", 200)
	for b.Loop() {
		Match(pat, text, Options{})
	}
}
