package toolset

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

// globRegexp is the reference semantics of matchGlob.
func globRegexp(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^`)
	for _, r := range glob {
		switch r {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		glob, name string
		want       bool
	}{
		{"Bash", "Bash", true}, {"Bash", "bash", false}, {"*", "", true}, {"*", "anything", true},
		{"mcp__github__*", "mcp__github__create_issue", true}, {"mcp__github__*", "mcp__gitlab__x", false},
		{"Task*", "TaskOutput", true}, {"*Output", "TaskOutput", true}, {"T?sk", "Task", true}, {"T?sk", "Tsk", false},
		{"a*b*c", "aXXbYYc", true}, {"a*b*c", "aXXbYY", false}, {"**", "x", true}, {"", "", true}, {"", "x", false},
	}
	for _, tt := range tests {
		if got := matchGlob(tt.glob, tt.name); got != tt.want {
			t.Errorf("matchGlob(%q, %q) = %v", tt.glob, tt.name, got)
		}
	}
	if !MatchName("mcp__github", "mcp__github__x") || MatchName("mcp__github", "mcp__githubx__y") || !MatchName("Bash(git:*)", "Bash") {
		t.Fatal("MatchName")
	}
}

func FuzzMatchGlob(f *testing.F) {
	for _, s := range [][2]string{{"mcp__*__x", "mcp__a__x"}, {"a*b?c", "aXbYc"}, {"*", ""}, {"??*", "ab"}, {"*a*a*a*", "aaaa"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, glob, name string) {
		if len(glob) > 64 || len(name) > 128 {
			return
		}
		// Names are ASCII; the reference regexp works on runes.
		for _, s := range []string{glob, name} {
			for i := 0; i < len(s); i++ {
				if s[i] >= 0x80 {
					return
				}
			}
		}
		if got, want := matchGlob(glob, name), globRegexp(glob).MatchString(name); got != want {
			t.Fatalf("matchGlob(%q, %q) = %v, regexp says %v", glob, name, got, want)
		}
	})
}

func FuzzMCPName(f *testing.F) {
	for _, s := range [][2]string{{"github", "create_issue"}, {"my server", "do.it"}, {"s", strings.Repeat("x", 100)}, {"a__b", "t"}, {"ü", "ö"}, {"s", "mcp__s__t"}, {strings.Repeat("s", 40), strings.Repeat("t", 40)}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, server, name string) {
		got, err := MCPName(server, name)
		if err != nil {
			return
		}
		if !tool.ValidName(got) {
			t.Fatalf("MCPName(%q, %q) = %q: invalid", server, name, got)
		}
		if again, _ := MCPName(server, name); again != got {
			t.Fatal("not deterministic")
		}
		if s, _, ok := SplitMCPName(got); !ok || s != SanitizeName(server) {
			t.Fatalf("SplitMCPName(%q) = %q, %v", got, s, ok)
		}
	})
}

func FuzzSearch(f *testing.F) {
	for _, q := range []string{"cron", "select:Read,CronList", "mcp__github list", "+task +list", "SELECT:", "  ", "++", "mcp__"} {
		f.Add(q, 3)
	}
	p := deferPool(f, Options{DeferMCPOver: 1})
	f.Fuzz(func(t *testing.T, q string, n int) {
		res, err := p.Search(q, n)
		if err != nil {
			if strings.TrimSpace(q) != "" {
				t.Fatalf("Search(%q): %v", q, err)
			}
			return
		}
		limit := n
		if limit <= 0 {
			limit = 5
		}
		if _, sel := cutPrefixFold(strings.TrimSpace(q), "select:"); !sel && len(res.Tools) > min(limit, maxSearchResults) {
			t.Fatalf("Search(%q, %d) returned %d tools", q, n, len(res.Tools))
		}
		_ = res.Text()
	})
}

func FuzzMarkdownSchema(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":"string","enum":["x"]}},"required":["a"]}`, `{"properties":{"a":{"properties":{"b":{}}}}}`, `{"properties":[]}`, `null`, `{"type":"object","properties":{"a":{"type":"array","items":{"properties":{"c":{"type":"integer"}}}}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		out := Markdown([]*tool.Spec{{Name: "T", Description: "d", InputSchema: json.RawMessage(schema)}})
		if !strings.HasPrefix(out, "# Available tools\n\n## T\n") {
			t.Fatalf("markdown = %q", out)
		}
	})
}
