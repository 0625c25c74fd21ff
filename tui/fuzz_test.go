package tui

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/tool"
)

func TestRenderMarkdown(t *testing.T) {
	st := newStyles(false)
	for _, tc := range []struct{ in, want string }{
		{"# Title", "Title"},
		{"- one\n- two", "• one\n• two"},
		{"1. first", "1. first"},
		{"- [x] done\n- [ ] todo", "☑ done\n☐ todo"},
		{"**bold** and *it* and `code`", "bold and it and code"},
		{"snake_case_name stays", "snake_case_name stays"},
		{"a * b * c", "a * b * c"},
		{"see [docs](https://x.dev/d)", "see docs (https://x.dev/d)"},
		{"```go\nfunc main() {}\n```", "  func main() {}"},
		{"> quoted", "│ quoted"},
		{"---", strings.Repeat("─", 40)},
		{"#hashtag", "#hashtag"},
		{"**unclosed", "**unclosed"},
	} {
		if got := ansi.Strip(renderMarkdown(st, tc.in, 80)); got != tc.want {
			t.Errorf("renderMarkdown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := strings.Repeat("word ", 40)
	for _, l := range strings.Split(renderMarkdown(st, "- "+long, 30), "\n") {
		if w := ansi.StringWidth(l); w > 30 {
			t.Errorf("line %q is %d wide", l, w)
		}
	}
}

// FuzzRenderMarkdown: any reply renders without panicking, within the
// width, and no control character of the input reaches the terminal.
func FuzzRenderMarkdown(f *testing.F) {
	for _, s := range []string{"# h\n- a\n```\ncode\n```", "**a *b* `c`** [x](y)", "\x1b[2J\x07", "> q\n1) x\n---", "_a_b_ __c__", "```\nunclosed"} {
		f.Add(s, 40)
	}
	st := newStyles(true)
	f.Fuzz(func(t *testing.T, s string, width int) {
		width = 10 + abs(width)%150
		out := renderMarkdown(st, s, width)
		plain := ansi.Strip(out)
		for _, r := range plain {
			if (r < 0x20 && r != '\n') || r == 0x7f {
				t.Fatalf("control %U reached the output: %q", r, plain)
			}
		}
		if !utf8.ValidString(plain) {
			t.Fatalf("invalid UTF-8 out: %q", plain)
		}
		for _, l := range strings.Split(out, "\n") {
			if w := ansi.StringWidth(l); w > width+2 {
				t.Fatalf("line %q is %d wide, width %d", ansi.Strip(l), w, width)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // math.MinInt
			return 0
		}
		return -n
	}
	return n
}

// BenchmarkFirstFrame is the UI's own share of the cold start: styles,
// the input and the first View.
func BenchmarkFirstFrame(b *testing.B) {
	opts := &Options{}
	for b.Loop() {
		m := newModel(context.Background(), opts, newBus(nil), true)
		m.opening = true
		_ = m.View()
	}
}

// BenchmarkView is one redraw during a busy turn: a streamed reply, two
// running calls, the input and the status line.
func BenchmarkView(b *testing.B) {
	m := newModel(context.Background(), &Options{}, newBus(nil), true)
	m.running = true
	m.reply.WriteString(strings.Repeat("Some **streamed** text with `code` and a [link](http://x).\n", 30))
	for _, id := range []string{"a", "b"} {
		m.event(&agent.ToolStatus{Status: tool.Status{ToolUseID: id, Name: "Bash", Phase: tool.PhaseDoing, Description: "Run the tests"}})
	}
	for b.Loop() {
		_ = m.View()
	}
}

func BenchmarkRenderMarkdown(b *testing.B) {
	st := newStyles(true)
	text := strings.Repeat("## Heading\n\nSome **bold** text, `code`, and a list:\n- one\n- two\n\n```go\nfunc f() {}\n```\n", 20)
	for b.Loop() {
		_ = renderMarkdown(st, text, 80)
	}
}
