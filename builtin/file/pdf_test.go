package file

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"
)

var update = flag.Bool("update", false, "rewrite testdata files")

// makePDF builds a minimal valid PDF 1.4 with one page per text, each
// showing its text in Helvetica, with a correct cross-reference table.
func makePDF(pages []string) []byte {
	var objs []string
	n := len(pages)
	// 1: catalog, 2: pages, 3: font, then per page: page object, content stream.
	kids := make([]string, n)
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	objs = append(objs,
		"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	)
	for i, text := range pages {
		stream := fmt.Sprintf("BT /F1 24 Tf 72 720 Td (%s) Tj ET", text)
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i),
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream),
		)
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// TestPDFTestdata keeps testdata/two-pages.pdf in step with makePDF
// (go test -run TestPDFTestdata -update rewrites it).
func TestPDFTestdata(t *testing.T) {
	want := makePDF([]string{"Hello from page one", "Second page text"})
	path := filepath.Join("testdata", "two-pages.pdf")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("testdata/two-pages.pdf is stale; run with -update")
	}
}

func TestReadPDF(t *testing.T) {
	dir, env := testEnv(t)
	data, err := os.ReadFile(filepath.Join("testdata", "two-pages.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	two := writeFile(t, filepath.Join(dir, "doc.pdf"), string(data))
	var many []string
	for i := 1; i <= 25; i++ {
		many = append(many, fmt.Sprintf("Text of page %d", i))
	}
	long := writeFile(t, filepath.Join(dir, "long.pdf"), string(makePDF(many)))
	broken := writeFile(t, filepath.Join(dir, "broken.pdf"), "%PDF-1.4\nthis is not really a pdf\n")

	tests := []struct {
		name    string
		in      ReadInput
		want    []string
		notWant []string
		wantErr []string
	}{
		{name: "whole", in: ReadInput{FilePath: two}, want: []string{"--- Page 1 ---\nHello from page one", "--- Page 2 ---\nSecond page text"}},
		{name: "one page", in: ReadInput{FilePath: two, Pages: "2"}, want: []string{"Second page text"}, notWant: []string{"page one"}},
		{name: "range clipped to the end", in: ReadInput{FilePath: two, Pages: "2-9"}, want: []string{"Second page text"}},
		{name: "past the end", in: ReadInput{FilePath: two, Pages: "3"}, wantErr: []string{"past the end", "2 pages"}},
		{name: "long needs pages", in: ReadInput{FilePath: long}, wantErr: []string{"25 pages", "pass pages"}},
		{name: "long with pages", in: ReadInput{FilePath: long, Pages: "21-25"},
			want: []string{"Text of page 21", "Text of page 25"}, notWant: []string{"page 20\n"}},
		{name: "long first pages", in: ReadInput{FilePath: long, Pages: "1-20"}, want: []string{"Text of page 20", `pages="21-25"`}},
		{name: "too many pages", in: ReadInput{FilePath: long, Pages: "1-21"}, wantErr: []string{"at most 20 pages"}},
		{name: "bad range", in: ReadInput{FilePath: two, Pages: "x-2"}, wantErr: []string{"not a page range"}},
		{name: "broken", in: ReadInput{FilePath: broken}, wantErr: []string{"cannot parse"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tooltest.Call(t, NewRead(Options{}), env, tt.in)
			if tt.wantErr != nil {
				mustErr(t, r, tt.wantErr...)
				return
			}
			got := mustOK(t, r)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q in:\n%s", w, got)
				}
			}
		})
	}
}

func FuzzParsePages(f *testing.F) {
	for _, s := range []string{"1", "1-5", "3-2", "0", "-", "1-", "a", " 2 - 4 ", "1-21", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		first, last, err := parsePages(s, 20)
		if err != nil {
			return
		}
		if first < 1 || last < first || last-first+1 > 20 {
			t.Fatalf("parsePages(%q) = %d, %d", s, first, last)
		}
	})
}
