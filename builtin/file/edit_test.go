package file

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/gantry-dev/gantry/tool"
)

func TestEdit(t *testing.T) {
	tests := []struct {
		name    string
		content string
		in      EditInput
		want    string   // file after
		wantMsg []string // in the model text
		wantErr []string
	}{
		{name: "unique", content: "a\nfoo := 1\nb\n", in: EditInput{OldString: "foo := 1", NewString: "foo := 2"}, want: "a\nfoo := 2\nb\n",
			wantMsg: []string{"replaced 1 occurrence", "     2\tfoo := 2"}},
		{name: "not found with snippet", content: "func main() {\n\tfmt.Println(\"hi\")\n}\n",
			in:      EditInput{OldString: "fmt.Printn(\"hi\")", NewString: "x"},
			wantErr: []string{"old_string was not found", "most similar text is at line 2", "     2\t\tfmt.Println(\"hi\")"}},
		{name: "not found nothing similar", content: "abc\n", in: EditInput{OldString: "zzzzqqqq", NewString: "x"},
			wantErr: []string{"not found"}},
		{name: "found twice", content: "x\nx\n", in: EditInput{OldString: "x", NewString: "y"}, wantErr: []string{"found 2 times", "replace_all"}},
		{name: "replace all", content: "x\nx\n", in: EditInput{OldString: "x", NewString: "y", ReplaceAll: true}, want: "y\ny\n",
			wantMsg: []string{"replaced 2 occurrences"}},
		{name: "same strings", content: "x", in: EditInput{OldString: "x", NewString: "x"}, wantErr: []string{"the same"}},
		{name: "CRLF with LF old_string", content: "one\r\ntwo\r\nthree\r\n", in: EditInput{OldString: "one\ntwo\n", NewString: "1\n2\n"},
			want: "1\r\n2\r\nthree\r\n"},
		{name: "CRLF single line gets CRLF breaks", content: "one\r\ntwo\r\n", in: EditInput{OldString: "two", NewString: "2a\n2b"},
			want: "one\r\n2a\r\n2b\r\n"},
		{name: "BOM kept", content: "\ufeffhello world\n", in: EditInput{OldString: "hello", NewString: "bye"}, want: "\ufeffbye world\n"},
		{name: "BOM and CRLF", content: "\ufeffa\r\nb\r\n", in: EditInput{OldString: "a\nb", NewString: "c\nd"}, want: "\ufeffc\r\nd\r\n"},
		{name: "curly quotes fallback", content: "say “hello” and it’s done\n", in: EditInput{OldString: `"hello" and it's`, NewString: `"bye" and it's`},
			want: "say “bye” and it’s done\n", wantMsg: []string{"normalising curly quotes"}},
		{name: "curly quotes ambiguous", content: "“a”\n“a”\n", in: EditInput{OldString: `"a"`, NewString: "b"}, wantErr: []string{"found 2 times"}},
		{name: "exact wins over quotes", content: "\"a\" “a”\n", in: EditInput{OldString: `"a"`, NewString: "b"}, want: "b “a”\n"},
		{name: "notebook refused", content: "{}", in: EditInput{FilePath: "n.ipynb", OldString: "{", NewString: "["}, wantErr: []string{"NotebookEdit"}},
		{name: "empty old on non-empty file", content: "x", in: EditInput{OldString: "", NewString: "y"}, wantErr: []string{"exists and is not empty"}},
		{name: "empty old on empty file", content: "", in: EditInput{OldString: "", NewString: "y"}, want: "y"},
		{name: "multiline with indentation", content: "if x {\n\treturn 1\n}\n", in: EditInput{OldString: "\treturn 1\n}", NewString: "\treturn 2\n}"},
			want: "if x {\n\treturn 2\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, env := testEnv(t)
			name := tt.in.FilePath
			if name == "" {
				name = "f.txt"
			}
			p := writeFile(t, filepath.Join(dir, name), tt.content)
			mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p}))
			in := tt.in
			in.FilePath = p
			r := tooltest.Call(t, NewEdit(Options{}), env, in)
			if tt.wantErr != nil {
				mustErr(t, r, tt.wantErr...)
				if readFile(t, p) != tt.content {
					t.Fatal("file changed by a failed edit")
				}
				return
			}
			msg := mustOK(t, r)
			if got := readFile(t, p); got != tt.want {
				t.Fatalf("file = %q, want %q", got, tt.want)
			}
			for _, w := range tt.wantMsg {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if st, _ := env.Files.Get(p); st.Hash != hashBytes([]byte(tt.want)) {
				t.Errorf("state not updated")
			}
		})
	}
}

func TestEditCreateAndPreconditions(t *testing.T) {
	dir, env := testEnv(t)
	ed := NewEdit(Options{})
	// Empty old_string on a missing file creates it (with parents).
	mustOK(t, tooltest.Call(t, ed, env, EditInput{FilePath: "new/dir/f.go", NewString: "package f\n"}))
	p := filepath.Join(dir, "new/dir/f.go")
	if readFile(t, p) != "package f\n" {
		t.Fatal("not created")
	}
	// Then editable without a Read (the write is recorded).
	mustOK(t, tooltest.Call(t, ed, env, EditInput{FilePath: p, OldString: "f", NewString: "g"}))
	// Missing file with old_string.
	mustErr(t, tooltest.Call(t, ed, env, EditInput{FilePath: "nope.txt", OldString: "a", NewString: "b"}), "does not exist")
	// Not read.
	q := writeFile(t, filepath.Join(dir, "q.txt"), "abc\n")
	mustErr(t, tooltest.Call(t, ed, env, EditInput{FilePath: q, OldString: "abc", NewString: "x"}), "has not been read")
	// A partial read is enough for Edit.
	mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: q, Limit: num(1)}))
	// Changed since the read.
	writeFile(t, q, "abd\n")
	mustErr(t, tooltest.Call(t, ed, env, EditInput{FilePath: q, OldString: "abd", NewString: "x"}), "has changed since it was last read", "Read it again")
}

// TestConcurrentEdits: two calls (two subagents with their own file caches)
// edit one file at once. Writes are serialised; the second sees the file
// changed since its read and fails instead of losing the first's change.
func TestConcurrentEdits(t *testing.T) {
	for i := 0; i < 20; i++ {
		dir, _ := testEnv(t)
		p := writeFile(t, filepath.Join(dir, "shared.txt"), "alpha\nbeta\n")
		ed := Tools(Options{})[2]
		envs := []*tool.Env{{WorkDir: dir, Files: tool.NewFileCache(0)}, {WorkDir: dir, Files: tool.NewFileCache(0)}}
		for _, e := range envs {
			mustOK(t, tooltest.Call(t, NewRead(Options{}), e, ReadInput{FilePath: p}))
		}
		edits := []EditInput{{FilePath: p, OldString: "alpha", NewString: "ALPHA"}, {FilePath: p, OldString: "beta", NewString: "BETA"}}
		results := make([]*tool.Result, 2)
		var wg sync.WaitGroup
		for k := range 2 {
			wg.Go(func() {
				raw, _ := json.Marshal(edits[k])
				r, err := ed.Call(context.Background(), envs[k], raw)
				if err != nil {
					t.Error(err)
				}
				results[k] = r
			})
		}
		wg.Wait()
		ok := 0
		for k, r := range results {
			if !r.IsError {
				ok++
				continue
			}
			if !strings.Contains(r.TextContent(), "has changed since it was last read") {
				t.Fatalf("edit %d: %s", k, r.TextContent())
			}
		}
		if ok != 1 {
			t.Fatalf("%d edits succeeded, want exactly 1", ok)
		}
		got := readFile(t, p)
		if got != "ALPHA\nbeta\n" && got != "alpha\nBETA\n" {
			t.Fatalf("file = %q", got)
		}
	}
	// One session (one cache): both edits apply, none is lost.
	dir, env := testEnv(t)
	p := writeFile(t, filepath.Join(dir, "shared.txt"), "alpha\nbeta\n")
	tools := Tools(Options{})
	mustOK(t, tooltest.Call(t, tools[0], env, ReadInput{FilePath: p}))
	var wg sync.WaitGroup
	for _, e := range []EditInput{{FilePath: p, OldString: "alpha", NewString: "ALPHA"}, {FilePath: p, OldString: "beta", NewString: "BETA"}} {
		wg.Go(func() {
			raw, _ := json.Marshal(e)
			if r, _ := tools[2].Call(context.Background(), env, raw); r.IsError {
				t.Error(r.TextContent())
			}
		})
	}
	wg.Wait()
	if got := readFile(t, p); got != "ALPHA\nBETA\n" {
		t.Fatalf("file = %q", got)
	}
}

func TestLocksCancel(t *testing.T) {
	l := NewLocks()
	unlock, err := l.Lock(context.Background(), "/x")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Lock(ctx, "/x"); err == nil {
		t.Fatal("locked twice")
	}
	unlock()
	unlock() // idempotent
	u2, err := l.Lock(context.Background(), "/x")
	if err != nil {
		t.Fatal(err)
	}
	u2()
	if len(l.m) != 0 {
		t.Fatalf("lock table holds %d entries", len(l.m))
	}
}

// FuzzEditRoundTrip: an edit and its reverse give back the original bytes,
// for LF, CRLF and BOM files.
func FuzzEditRoundTrip(f *testing.F) {
	f.Add("a\nb\nc\n", 2, 3, "X\nY", false, false)
	f.Add("one\ntwo\nthree\n", 0, 8, "1\n", true, true)
	f.Add("say “hi”\n", 4, 5, "Z", false, true)
	f.Add("\x00\xff\n\n", 1, 2, "q", true, false)
	f.Fuzz(func(t *testing.T, body string, start, n int, repl string, crlf, bom bool) {
		if strings.Contains(body, "\r") || strings.Contains(repl, "\r") {
			return
		}
		if crlf {
			body = strings.ReplaceAll(body, "\n", "\r\n")
		}
		if len(body) == 0 {
			return
		}
		start = ((start % len(body)) + len(body)) % len(body)
		n = ((n % (len(body) - start + 1)) + (len(body) - start + 1)) % (len(body) - start + 1)
		old := body[start : start+n]
		if old == "" || strings.HasSuffix(old, "\r") || strings.HasPrefix(old, "\n") && start > 0 && body[start-1] == '\r' {
			return // do not split a CRLF pair
		}
		content := body
		if bom {
			content = utf8BOM + body
		}
		// The model writes LF.
		oldLF := strings.ReplaceAll(old, "\r\n", "\n")
		if oldLF == repl {
			return
		}
		out, ed, err := applyEdit([]byte(content), oldLF, repl, false)
		if err != nil {
			return // not found / ambiguous: nothing to round-trip
		}
		if ed.quotes {
			return // quote styling is not reversible by design
		}
		if bom && !strings.HasPrefix(string(out), utf8BOM) {
			t.Fatal("BOM lost")
		}
		if crlf && strings.Contains(oldLF, "\n") && lineEnding(out) != "\r\n" {
			return // the edit removed the line breaks that told the file's style
		}
		back, _, err := applyEdit(out, repl, oldLF, false)
		if err != nil {
			return // repl occurs elsewhere too: reverse is ambiguous
		}
		if string(back) != content && strings.Count(content, old) == 1 && strings.Count(string(out), toCRLFIf(crlf, repl)) == 1 {
			t.Fatalf("round trip:\n%q\n→ %q\n→ %q", content, out, back)
		}
	})
}

func toCRLFIf(crlf bool, s string) string {
	if crlf {
		return toCRLF(s)
	}
	return s
}

func TestClosestSnippetBounded(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&b, "line number %d with some text\n", i)
	}
	s := closestSnippet([]byte(b.String()), "line numbr 12345 with some text")
	if !strings.Contains(s, "line 12346") {
		t.Fatalf("%s", s)
	}
	if os.Getenv("X") != "" {
		t.Log(s)
	}
}

func TestEditOverlapping(t *testing.T) {
	_, _, err := applyEdit([]byte("00000"), "000", "1", false)
	if err == nil || !strings.Contains(err.Error(), "found 3 times") {
		t.Fatalf("err = %v", err)
	}
	out, ed, err := applyEdit([]byte("aaaa"), "aa", "b", true)
	if err != nil || string(out) != "bb" || ed.count != 2 {
		t.Fatalf("replace_all: %q %+v %v", out, ed, err)
	}
}
