package frontmatter

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name, in     string
		header, body string
		err          error
	}{
		{"plain", "---\nname: a\n---\nbody\n", "name: a", "body\n", nil},
		{"crlf and bom", "\ufeff---\r\nname: a\r\n---\r\nbody\r\n", "name: a", "body\n", nil},
		{"trailing blanks on delimiters", "--- \t\nname: a\n---  \nbody", "name: a", "body", nil},
		{"empty header", "---\n---\nbody", "", "body", nil},
		{"no body", "---\nname: a\n---", "name: a", "", nil},
		{"no body, newline", "---\nname: a\n---\n", "name: a", "", nil},
		{"dashes inside are not a delimiter", "---\na: ----\n----\n--- x\n---\nb", "a: ----\n----\n--- x", "b", nil},
		{"body keeps later delimiters", "---\na: 1\n---\nx\n---\ny", "a: 1", "x\n---\ny", nil},
		{"missing", "name: a\n---\n", "", "", ErrMissing},
		{"empty file", "", "", "", ErrMissing},
		{"leading blank line", "\n---\na: 1\n---\n", "", "", ErrMissing},
		{"unclosed", "---\nname: a\nbody", "", "", ErrUnclosed},
		{"only opening", "---", "", "", ErrUnclosed},
	} {
		h, b, err := Split([]byte(tc.in))
		if !errors.Is(err, tc.err) || h != tc.header || b != tc.body {
			t.Errorf("%s: Split = %q, %q, %v; want %q, %q, %v", tc.name, h, b, err, tc.header, tc.body, tc.err)
		}
	}
}

func TestParse(t *testing.T) {
	var fm struct {
		Name  string `yaml:"name"`
		Tools Names  `yaml:"tools"`
		Deny  Names  `yaml:"deny"`
	}
	body, err := Parse([]byte("---\nname: x\ntools: Bash(git diff:*), Read\ndeny:\n  - Write\n  - Edit, Grep\n---\nhello"), &fm)
	if err != nil || body != "hello" || fm.Name != "x" {
		t.Fatalf("Parse = %q, %v, %+v", body, err, fm)
	}
	if want := (Names{"Bash(git diff:*)", "Read"}); !slices.Equal(fm.Tools, want) {
		t.Errorf("tools = %q, want %q", fm.Tools, want)
	}
	if want := (Names{"Write", "Edit", "Grep"}); !slices.Equal(fm.Deny, want) {
		t.Errorf("deny = %q, want %q", fm.Deny, want)
	}
	if _, err := Parse([]byte("---\ntools: {a: b}\n---\n"), &fm); err == nil || !strings.HasPrefix(err.Error(), "front matter: ") {
		t.Errorf("a map for names: %v", err)
	}
	if _, err := Parse([]byte("---\nname: [\n---\n"), &fm); err == nil {
		t.Error("bad YAML accepted")
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"---\nname: a\n---\nbody\n", "\ufeff---\r\na: 1\r\n---\r\n", "---\n---\n", "---", "", "--- \nx\n---\t\ny", "---\n----\n---\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, b, err := Split([]byte(s))
		if err != nil {
			if h != "" || b != "" {
				t.Fatalf("error %v with header %q body %q", err, h, b)
			}
			return
		}
		norm := strings.ReplaceAll(strings.TrimPrefix(s, "\ufeff"), "\r\n", "\n")
		if !strings.HasPrefix(norm, "---") || !strings.HasSuffix(norm, b) || !strings.Contains(norm, h) {
			t.Fatalf("Split(%q) = %q, %q: not parts of the input", s, h, b)
		}
		for _, l := range strings.Split(h, "\n") {
			if isDelimiter(l) {
				t.Fatalf("Split(%q): header %q holds a delimiter line", s, h)
			}
		}
		var v map[string]any
		_, _ = Parse([]byte(s), &v) // must not panic
	})
}

func TestParseLineNumbers(t *testing.T) {
	var fm struct {
		Tools Names `yaml:"tools"`
	}
	_, err := Parse([]byte("---\nname: x\ntools: {a: b}\n---\n"), &fm)
	if err == nil || !strings.Contains(err.Error(), "line 3:") {
		t.Errorf("error %v does not name the file's line 3", err)
	}
	var empty struct{ A int }
	if _, err := Parse([]byte("---\n---\nbody"), &empty); err != nil {
		t.Errorf("empty header: %v", err)
	}
}
