package grep

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseRipgrepPlain feeds ripgrep's heading output, with the cases
// that make it tricky, to the parser.
func TestParseRipgrepPlain(t *testing.T) {
	long := strings.Repeat("y", 300<<10) // longer than the reader's buffer
	out := "./a.txt\x00" + "1:first needle\n2-context\n5:\n7:crlf needle\r\n\n" +
		"./odd\nname\x00" + "3:needle in odd\n\n" +
		"./bin.dat\x00" + "1:needle before NUL\n" +
		"./bin.dat: WARNING: stopped searching binary file after match (found \"\\0\" byte around offset 70023)\n\n" +
		"./long.txt\x00" + "1:" + long + "\n" // no final empty line
	q := &Query{Mode: ModeContent, LineNumbers: true, Before: 1}
	o := Options{MaxColumns: -1}.WithDefaults()
	c := newCollector(q, o)
	n, err := parseRipgrepPlain(context.Background(), strings.NewReader(out), "/r", q, o, c)
	if err != nil || n != 4 {
		t.Fatalf("parse: %d files, %v", n, err)
	}
	got := c.result(EngineRipgrep).Format()
	want := strings.Join([]string{
		"/r/a.txt:1:first needle", "/r/a.txt-2-context", "--", "/r/a.txt:5:", "--", "/r/a.txt:7:crlf needle", "--",
		"/r/bin.dat:1:needle before NUL", "--",
		"/r/long.txt:1:" + long, "--",
		"/r/odd\nname:3:needle in odd",
	}, "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%.2000s", diff)
	}
	// A file's lines in two places: an error (auto falls back to Go).
	c = newCollector(q, o)
	if _, err := parseRipgrepPlain(context.Background(), strings.NewReader("./a\x001:x\n\n./a\x002:y\n\n"), "/r", q, o, c); err == nil {
		t.Error("a path seen twice parsed without error")
	}
}

func TestNumberedLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		num  int
		sep  byte
		text string
		ok   bool
	}{
		{"12:abc", 12, ':', "abc", true},
		{"3-ctx: 4", 3, '-', "ctx: 4", true},
		{"5:", 5, ':', "", true},
		{"./x: WARNING", 0, 0, "", false},
		{"12", 0, 0, "", false},
		{":x", 0, 0, "", false},
		{"99999999999999999999999:x", 0, 0, "", false},
	} {
		num, sep, text, ok := numberedLine([]byte(c.in))
		if num != c.num || sep != c.sep || string(text) != c.text || ok != c.ok {
			t.Errorf("numberedLine(%q) = %d %q %q %v", c.in, num, sep, text, ok)
		}
	}
}

func FuzzParseRipgrepPlain(f *testing.F) {
	f.Add("./a.txt\x001:needle\n2-ctx\n\n./b\x003:x\n")
	f.Add("./a\x00./a: WARNING: stopped\n\n")
	f.Add("\x00\n\n\x00")
	f.Fuzz(func(t *testing.T, out string) {
		for _, mode := range []string{ModeContent, ModeCount} {
			q := &Query{Mode: mode, LineNumbers: true, HeadLimit: 5}
			o := Options{}.WithDefaults()
			c := newCollector(q, o)
			n, err := parseRipgrepPlain(context.Background(), strings.NewReader(out), "/r", q, o, c)
			if err != nil {
				continue
			}
			r := c.result(EngineRipgrep)
			if len(r.Files) != n {
				t.Fatalf("%d files reported, %d collected", n, len(r.Files))
			}
			for _, fr := range r.Files {
				if !strings.HasPrefix(fr.Path, "/") || fr.MatchedLines == 0 {
					t.Fatalf("bad file result %+v", fr)
				}
			}
			_ = r.Format()
		}
	})
}

// BenchmarkRipgrepOutput is the rg engine's work on ripgrep's output, without
// ripgrep: parsing what rg printed for errors.New in Go's tree (captured
// once), the size-cap stats, the result and its text.
func BenchmarkRipgrepOutput(b *testing.B) {
	root := goroot(b)
	rg, err := findRipgrep(Options{})
	if err != nil {
		b.Skip("rg not on PATH")
	}
	for _, mode := range []string{ModeFiles, ModeContent} {
		b.Run(mode, func(b *testing.B) {
			q := &Query{Root: root, Pattern: "errors.New", Mode: mode, LineNumbers: mode == ModeContent}
			o := Options{}.WithDefaults()
			m, err := compilePattern(q.Pattern, false, false)
			if err != nil {
				b.Fatal(err)
			}
			q.m = m
			cmd := exec.Command(rg, ripgrepArgs(q, o)...)
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			c0, _, ok := processCPU()
			for b.Loop() {
				c := newCollector(q, o)
				var n int
				if mode == ModeFiles {
					n, err = parseRipgrepFiles(context.Background(), bytes.NewReader(out), root, o.MaxFileSize, c)
				} else {
					n, err = parseRipgrepPlain(context.Background(), bytes.NewReader(out), root, q, o, c)
				}
				if err != nil || n == 0 {
					b.Fatal(n, err)
				}
				if s := c.result(EngineRipgrep).Format(); len(s) == 0 {
					b.Fatal("no text")
				}
			}
			if c1, _, ok1 := processCPU(); ok && ok1 {
				b.ReportMetric(float64((c1-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			}
		})
	}
}
