package file

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gantry-dev/gantry/tool/tooltest"
)

// TestDisplayEscaped covers the terminal-escape case of docs/security.md: terminal escapes and
// invisible Unicode from file content reach the display channel escaped,
// while the model channel stays faithful.
func TestDisplayEscaped(t *testing.T) {
	hostile := "ok\x1b]0;pwned\x07 \x1b[2J red \u202egnp.exe\u200b \x9b31m\r\n"
	cases := map[string]string{
		"\x1b[31m":  `\x1b[31m`,
		"a\x07b":    `a\x07b`,
		"\u202e":    `\u202e`,
		"\u2066x":   `\u2066x`,
		"\u200b":    `\u200b`,
		"\ufeff":    `\ufeff`,
		"\x9b":      `\x9b`, // invalid UTF-8 byte
		"\u009b":    `\u009b`,
		"tab\tnl\n": "tab\tnl\n",
		"plain é":   "plain é",
		"cr\r":      `cr\x0d`,
	}
	for in, want := range cases {
		if got := EscapeDisplay(in); got != want {
			t.Errorf("EscapeDisplay(%q) = %q, want %q", in, got, want)
		}
	}

	dir, env := testEnv(t)
	p := writeFile(t, filepath.Join(dir, "evil\x1b[1m.txt"), "line one\n"+hostile)
	r := tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p})
	if !strings.Contains(r.TextContent(), "\x1b]0;pwned") {
		t.Errorf("model channel is not faithful")
	}
	checkClean(t, "Read display", displayText(r))

	r = tooltest.Call(t, NewEdit(Options{}), env, EditInput{FilePath: p, OldString: "line one", NewString: "line 1 \x1b[5m"})
	mustOK(t, r)
	d := displayText(r)
	checkClean(t, "Edit display", d)
	if !strings.Contains(d, `+line 1 \x1b[5m`) {
		t.Errorf("diff lacks the escaped change: %s", d)
	}
	r = tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: p, Content: hostile + "more\n"})
	mustOK(t, r)
	checkClean(t, "Write display", displayText(r))
	r = tooltest.Call(t, NewEdit(Options{}), env, EditInput{FilePath: p, OldString: "not there \u202e", NewString: "x"})
	checkClean(t, "error display", displayText(r))
}

func checkClean(t *testing.T, what, s string) {
	t.Helper()
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || invisible(r) {
			t.Fatalf("%s carries %U raw: %q", what, r, s)
		}
	}
	if !utf8.ValidString(s) {
		t.Fatalf("%s is not valid UTF-8", what)
	}
}

func FuzzEscapeDisplay(f *testing.F) {
	for _, s := range []string{"", "a\x1b[0m", "\u202e\u2066", "\xff\xfe", "x\ny\tz", "\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkClean(t, "EscapeDisplay", EscapeDisplay(s))
	})
}

// FuzzNumberLines reads arbitrary bytes: no panic, valid UTF-8 out, every
// output line numbered, line numbers consecutive from the offset.
func FuzzNumberLines(f *testing.F) {
	for _, s := range []string{"", "a\nb\n", "\xff\xfe\x00\n\r\n", strings.Repeat("x", 100), "\ufeffa\r\nb", "\n\n\n"} {
		f.Add([]byte(s), 1, 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, offset, limit int) {
		offset = 1 + abs(offset)%5
		limit = abs(limit) % 5
		res, err := numberLines(context.Background(), bufio.NewReaderSize(strings.NewReader(string(data)), 16), readRange{offset, limit}, 10, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(res.text) {
			t.Fatalf("invalid UTF-8 out: %q", res.text)
		}
		want := offset
		for _, line := range strings.SplitAfter(res.text, "\n") {
			if line == "" {
				continue
			}
			numStr, _, ok := strings.Cut(line, "\t")
			if !ok || len(numStr) < 6 {
				t.Fatalf("bad line %q", line)
			}
			n, err := strconv.Atoi(strings.TrimSpace(numStr))
			if err != nil || n != want {
				t.Fatalf("line number %q, want %d", numStr, want)
			}
			want++
		}
		if res.shown != want-offset {
			t.Fatalf("shown %d, printed %d", res.shown, want-offset)
		}
		if limit > 0 && res.shown > limit {
			t.Fatalf("shown %d > limit %d", res.shown, limit)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // MinInt
			return 0
		}
		return -n
	}
	return n
}

// applyUnified applies a unified diff made by UnifiedDiff to old.
func applyUnified(t *testing.T, old, diff string) string {
	t.Helper()
	a := splitLines(old)
	var out []string
	pos := 0
	lines := strings.SplitAfter(diff, "\n")
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "@@") {
			var as, al, bs, bl int
			if _, err := fmt.Sscanf(l, "@@ -%d,%d +%d,%d @@", &as, &al, &bs, &bl); err != nil {
				t.Fatalf("hunk header %q: %v", l, err)
			}
			start := as - 1
			if al == 0 {
				start = as
			}
			out = append(out, a[pos:start]...)
			pos = start
			continue
		}
		if strings.HasPrefix(l, `\ No newline`) {
			if lines[i-1][0] != '+' {
				continue
			}
			last := &out[len(out)-1]
			*last = strings.TrimSuffix(*last, "\n")
			continue
		}
		body := l[1:]
		switch l[0] {
		case ' ':
			out = append(out, a[pos])
			pos++
		case '-':
			pos++
		case '+':
			out = append(out, body)
		}
	}
	out = append(out, a[pos:]...)
	return strings.Join(out, "")
}

// TestUnifiedDiffApplies: the diff of random texts applied to the old text
// gives the new text, including the fallback for very different texts.
func TestUnifiedDiffApplies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(string(rune('a' + rng.IntN(4))))
			b.WriteByte('\n')
		}
		if rng.IntN(3) == 0 {
			b.WriteString("tail")
		}
		return b.String()
	}
	for i := 0; i < 500; i++ {
		a, b := gen(rng.IntN(30)), gen(rng.IntN(30))
		d := UnifiedDiff("f", a, b)
		if a == b {
			if d != "" {
				t.Fatal("diff of equal texts")
			}
			continue
		}
		if got := applyUnified(t, a, d); got != b {
			t.Fatalf("apply(%q, diff) = %q, want %q\n%s", a, got, b, d)
		}
	}
	// Past the edit bound: still correct.
	var x, y strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&x, "x%d\n", i)
		fmt.Fprintf(&y, "y%d\n", i)
	}
	d := UnifiedDiff("f", x.String(), y.String())
	if !strings.Contains(d, "diff truncated") {
		t.Errorf("large diff not truncated")
	}
	if ops := diffLines(splitLines(x.String()), splitLines(y.String())); len(ops) != 6000 {
		t.Errorf("fallback has %d ops", len(ops))
	}
}

func TestLineChanges(t *testing.T) {
	tests := []struct {
		from, to     string
		added, remov int
	}{
		{"", "", 0, 0},
		{"a\nb\n", "a\nb\n", 0, 0},
		{"", "a\nb\n", 2, 0},
		{"a\nb\nc\n", "", 0, 3},
		{"one\ntwo\n", "one\nTWO\nthree\n", 2, 1},
		{"a\nb", "a\nb\n", 1, 1}, // the last line gained its newline
	}
	for _, tt := range tests {
		add, del := LineChanges([]byte(tt.from), []byte(tt.to))
		if add != tt.added || del != tt.remov {
			t.Errorf("LineChanges(%q, %q) = %d, %d; want %d, %d", tt.from, tt.to, add, del, tt.added, tt.remov)
		}
	}
}
