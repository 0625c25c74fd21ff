package file

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/gantry-dev/gantry/tool"
)

func lines(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(f(i))
		b.WriteByte('\n')
	}
	return b.String()
}

func TestReadText(t *testing.T) {
	long := strings.Repeat("é", 2500)
	tests := []struct {
		name    string
		content string
		in      ReadInput // FilePath filled in
		opts    Options
		want    []string // substrings of the model text
		notWant []string
		wantErr []string
	}{
		{name: "numbered", content: "alpha\nbeta\n", want: []string{"     1\talpha\n     2\tbeta\n"}},
		{name: "no final newline", content: "a\nb", want: []string{"     1\ta\n     2\tb\n"}},
		{name: "offset and limit", content: lines(10, func(i int) string { return fmt.Sprint("line", i) }),
			in:      ReadInput{Offset: num(3), Limit: num(2)},
			want:    []string{"     3\tline3\n     4\tline4\n", "Showing lines 3-4 of 10. Continue with offset=5."},
			notWant: []string{"line2", "line5"}},
		{name: "offset 0 is the start", content: "x\ny\n", in: ReadInput{Offset: num(0), Limit: num(1)},
			want: []string{"     1\tx\n"}, notWant: []string{"y"}},
		{name: "default limit", content: lines(2500, func(i int) string { return "l" }),
			want: []string{"  2000\tl\n", "Showing lines 1-2000 of 2500. Continue with offset=2001."}, notWant: []string{"  2001\t"}},
		{name: "offset past end", content: "a\nb\n", in: ReadInput{Offset: num(5)}, wantErr: []string{"offset 5 is past the end", "has 2 lines"}},
		{name: "long line cut", content: "short\n" + long + "\n", want: []string{strings.Repeat("é", 2000) + " … [line cut at 2000 characters]", "1 line(s) longer than 2000"},
			notWant: []string{strings.Repeat("é", 2001)}},
		{name: "CRLF dropped", content: "a\r\nb\r\n", want: []string{"     1\ta\n     2\tb\n"}, notWant: []string{"\r"}},
		{name: "BOM dropped", content: "\ufeffhello\n", want: []string{"     1\thello\n"}, notWant: []string{"\ufeff"}},
		{name: "invalid UTF-8 replaced", content: "ok \xff\xfe end\n", want: []string{"ok \uFFFD end"}},
		{name: "large file refused", content: strings.Repeat("x", 300<<10), wantErr: []string{"over the 256.0 KB limit", "offset and limit", "allow_large"}},
		{name: "large file with a range", content: strings.Repeat("0123456789\n", 30_000), in: ReadInput{Offset: num(29_999)},
			want: []string{" 29999\t0123456789\n 30000\t0123456789\n"}},
		{name: "allow_large", content: strings.Repeat("0123456789\n", 30_000), in: ReadInput{AllowLarge: true},
			want: []string{" 30000\t0123456789\n"}, notWant: []string{"Showing"}},
		{name: "allow_large past the hard cap", content: strings.Repeat("0123456789\n", 2000), opts: Options{MaxFileSize: 1000, HardMaxSize: 10_000},
			in: ReadInput{AllowLarge: true}, wantErr: []string{"even with allow_large"}},
		{name: "output cap", content: strings.Repeat("0123456789\n", 1000), opts: Options{MaxOutputBytes: 1000},
			in: ReadInput{Limit: num(1000)}, want: []string{"Output stopped after line", "Continue with offset="}},
		{name: "escape kept for the model", content: "\x1b[31mred\x1b[0m\n", want: []string{"\x1b[31mred"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, env := testEnv(t)
			p := writeFile(t, filepath.Join(dir, "f.txt"), tt.content)
			in := tt.in
			in.FilePath = p
			r := tooltest.Call(t, NewRead(tt.opts), env, in)
			if tt.wantErr != nil {
				mustErr(t, r, tt.wantErr...)
				return
			}
			got := mustOK(t, r)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("output does not contain %q:\n%.500s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("output contains %q", w)
				}
			}
			if _, ok := env.Files.Get(p); !ok {
				t.Errorf("read not recorded")
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	dir, env := testEnv(t)
	writeFile(t, filepath.Join(dir, "Notes.md"), "x")
	tests := []struct {
		name string
		path string
		want []string
	}{
		{"directory", dir, []string{"is a directory", "Glob"}},
		{"dev null", "/dev/null", []string{"/dev", "device"}},
		{"dev via dotdot", "/tmp/../dev/zero", []string{"/dev"}},
		{"NUL byte", "a\x00b", []string{"NUL byte"}},
		{"empty", "", []string{"empty"}},
		{"missing with a hint", filepath.Join(dir, "notes.md"), []string{"does not exist", "Did you mean " + filepath.Join(dir, "Notes.md")}},
		{"pages on text", filepath.Join(dir, "Notes.md"), []string{"pages applies to PDF files only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ReadInput{FilePath: tt.path}
			if tt.name == "pages on text" {
				in.Pages = "1"
			}
			r := tooltest.Call(t, NewRead(Options{}), env, in)
			mustErr(t, r, tt.want...)
		})
	}
	// A relative path without a working directory.
	r := tooltest.Call(t, NewRead(Options{}), &tool.Env{}, ReadInput{FilePath: "rel.txt"})
	mustErr(t, r, "no working directory")
}

func TestReadRelativeAndNoCache(t *testing.T) {
	dir, _ := testEnv(t)
	writeFile(t, filepath.Join(dir, "sub", "a.go"), "package a\n")
	env := &tool.Env{WorkDir: dir} // no file cache: Read still works
	got := mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: "sub/a.go"}))
	if !strings.Contains(got, "package a") {
		t.Fatal(got)
	}
}

func TestReadEmptyAndBinary(t *testing.T) {
	dir, env := testEnv(t)
	empty := writeFile(t, filepath.Join(dir, "empty"), "")
	got := mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: empty}))
	if !strings.Contains(got, "exists but is empty") {
		t.Fatal(got)
	}
	bin := writeFile(t, filepath.Join(dir, "prog"), "\x7fELF\x02\x01\x01\x00\x00\x00\x00garbage\x00\x01\x02")
	r := tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: bin})
	got = mustOK(t, r)
	if !strings.Contains(got, "binary file") || strings.Contains(got, "ELF") || strings.ContainsRune(got, 0) {
		t.Fatalf("binary read: %q", got)
	}
	// Mostly invalid UTF-8 without NUL: binary too.
	noise := writeFile(t, filepath.Join(dir, "noise"), strings.Repeat("\xff\xfe\x80", 100))
	if got := mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: noise})); !strings.Contains(got, "binary file") {
		t.Fatal(got)
	}
}

// TestReadHugeLine reads a file whose single line is far larger than the
// line bound: memory stays bounded (the line is cut while streaming).
func TestReadHugeLine(t *testing.T) {
	dir, env := testEnv(t)
	p := filepath.Join(dir, "huge.txt")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("abcdefgh"), 8192) // 64 KB
	for i := 0; i < 64; i++ {                       // 4 MB, one line
		f.Write(chunk)
	}
	f.WriteString("\nsecond\n")
	f.Close()
	got := mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p, Limit: num(2)}))
	if !strings.Contains(got, "[line cut at 2000 characters]") || !strings.Contains(got, "     2\tsecond") {
		t.Fatalf("%.300s", got)
	}
	if len(got) > 3000 {
		t.Fatalf("output is %d bytes", len(got))
	}
}

func TestReadUnchanged(t *testing.T) {
	dir, env := testEnv(t)
	p := writeFile(t, filepath.Join(dir, "a.txt"), "one\ntwo\n")
	rd := NewRead(Options{})
	first := mustOK(t, tooltest.Call(t, rd, env, ReadInput{FilePath: p}))
	second := mustOK(t, tooltest.Call(t, rd, env, ReadInput{FilePath: p}))
	if !strings.Contains(second, "unchanged since your last read") || strings.Contains(second, "one") {
		t.Fatalf("second read: %q", second)
	}
	// Another range is read in full.
	if got := mustOK(t, tooltest.Call(t, rd, env, ReadInput{FilePath: p, Offset: num(2)})); !strings.Contains(got, "two") {
		t.Fatal(got)
	}
	// A changed file is read again.
	writeFile(t, p, "one\ntwo\nthree\n")
	os.Chtimes(p, time.Now(), time.Now().Add(time.Second))
	if got := mustOK(t, tooltest.Call(t, rd, env, ReadInput{FilePath: p})); !strings.Contains(got, "three") {
		t.Fatal(got)
	}
	_ = first
	// After an Edit (whose state is a write, not a read) Read shows the content.
	mustOK(t, tooltest.Call(t, NewEdit(Options{}), env, EditInput{FilePath: p, OldString: "three", NewString: "drei"}))
	if got := mustOK(t, tooltest.Call(t, rd, env, ReadInput{FilePath: p})); !strings.Contains(got, "drei") {
		t.Fatal(got)
	}
}

func TestReadRecordsState(t *testing.T) {
	dir, env := testEnv(t)
	content := lines(50, func(i int) string { return fmt.Sprint(i) })
	p := writeFile(t, filepath.Join(dir, "a.txt"), content)
	mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p, Offset: num(10), Limit: num(5)}))
	st, ok := env.Files.Get(p)
	if !ok {
		t.Fatal("no state")
	}
	if st.Offset != 10 || st.Limit != 5 || !st.Partial || st.Size != int64(len(content)) || st.Hash != hashBytes([]byte(content)) {
		t.Fatalf("state %+v", st)
	}
	mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p}))
	if st, _ := env.Files.Get(p); st.Partial || st.Offset != 1 {
		t.Fatalf("full read state %+v", st)
	}
}

func pngBytes(t testing.TB, w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadImage(t *testing.T) {
	dir, env := testEnv(t)
	data := pngBytes(t, 3, 2)
	for _, name := range []string{"pic.png", "pic.dat"} { // by content, not extension
		p := writeFile(t, filepath.Join(dir, name), string(data))
		r := tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p})
		mustOK(t, r)
		var img *tool.Content
		for i := range r.Content {
			if r.Content[i].Type == tool.TypeImage {
				img = &r.Content[i]
			}
		}
		if img == nil || img.MIMEType != "image/png" || !bytes.Equal(img.Data, data) {
			t.Fatalf("%s: no PNG image block in %+v", name, r.Content)
		}
		if !strings.Contains(r.TextContent(), "3x2") {
			t.Errorf("no dimensions: %s", r.TextContent())
		}
		for _, c := range r.DisplayContent() {
			if c.Type == tool.TypeImage {
				t.Errorf("display carries the image")
			}
		}
	}
	// A .png that is text is read as text.
	p := writeFile(t, filepath.Join(dir, "fake.png"), "not an image\n")
	if got := mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p})); !strings.Contains(got, "not an image") {
		t.Fatal(got)
	}
	// Too large.
	big := writeFile(t, filepath.Join(dir, "big.png"), string(data)+strings.Repeat("x", 100))
	mustErr(t, tooltest.Call(t, NewRead(Options{MaxImageBytes: 50}), env, ReadInput{FilePath: big}), "over the 50 bytes limit")
	// Other formats by magic bytes.
	for mime, head := range map[string]string{
		"image/jpeg": "\xff\xd8\xff\xe0rest", "image/gif": "GIF89a....", "image/webp": "RIFF\x10\x00\x00\x00WEBPVP8 ",
	} {
		if got := imageMIME([]byte(head)); got != mime {
			t.Errorf("imageMIME(%q) = %q, want %q", head, got, mime)
		}
	}
}

func TestReadCancelled(t *testing.T) {
	dir, env := testEnv(t)
	p := writeFile(t, filepath.Join(dir, "a.txt"), lines(5000, func(i int) string { return "x" }))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := NewRead(Options{}).Call(ctx, env, []byte(fmt.Sprintf(`{"file_path":%q}`, p)))
	if err != nil {
		t.Fatal(err)
	}
	mustErr(t, r, "context canceled")
}
