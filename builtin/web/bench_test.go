package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/benchcpu"

	"github.com/gantry-dev/gantry/tool"
)

// bigPage returns an HTML page of about n bytes: headings, paragraphs with
// links and emphasis, lists, tables, code, and scripts and navigation to
// strip.
func bigPage(n int) string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>Big</title><style>p{margin:0}</style></head><body><nav><a href='/'>Home</a></nav>")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `<h2 id="s%d">Section %d</h2><p>Some <em>text</em> with a <a href="/doc/%d">link</a> and <code>code()</code>, `+
			`plus more words to make a paragraph of ordinary length for a documentation page.</p>`+
			`<ul><li>one</li><li>two <strong>bold</strong></li></ul>`+
			`<table><tr><th>Name</th><th>Value</th></tr><tr><td>a%d</td><td>%d</td></tr></table>`+
			`<pre><code>func f() { return %d }</code></pre><script>var x%d = %d;</script>`, i, i, i, i, i, i, i, i)
	}
	b.WriteString("</body></html>")
	return b.String()
}

// typicalPage returns a page of about n bytes shaped like a modern
// documentation or news page: about half of it inline scripts, styles and
// SVG icons (stripped), the rest article markup.
func typicalPage(n int) string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>Typical</title>")
	fmt.Fprintf(&b, "<style>%s</style><script>window.__DATA__=%q</script></head><body>",
		strings.Repeat(".c{margin:0;padding:1px 2px;color:#333} ", n/10/40), strings.Repeat(`{"k":"v","n":[1,2,3]},`, n/5/22))
	b.WriteString(`<nav>` + strings.Repeat(`<a href="/x"><svg viewBox="0 0 16 16"><path d="M8 0L16 8L8 16L0 8Z"/></svg>Menu</a>`, n/10/90) + `</nav>`)
	article := bigPage(n / 2)
	_, body, _ := strings.Cut(article, "</nav>")
	b.WriteString(body)
	return b.String()
}

// BenchmarkHTMLToMarkdown converts 1 MB pages (target: ≤ 30 ms): "dense"
// is all article markup (about 50,000 elements), "typical" a page half
// made of scripts, styles and icons.
func BenchmarkHTMLToMarkdown(b *testing.B) {
	b.Run("dense", func(b *testing.B) { benchConvert(b, bigPage(1<<20)) })
	b.Run("typical", func(b *testing.B) { benchConvert(b, typicalPage(1<<20)) })
}

func benchConvert(b *testing.B, page string) {
	conv := newConverter()
	b.SetBytes(int64(len(page)))
	// The process's CPU time per conversion (GC included): on a shared,
	// overloaded machine ns/op measures the queue for a core as well.
	defer benchcpu.Start(b)()
	for b.Loop() {
		md, _, err := htmlToMarkdown(context.Background(), conv, strings.NewReader(page), "https://example.com/")
		if err != nil || len(md) == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkCachedFetch is a WebFetch call served from the cache (target:
// ≤ 1 ms).
func BenchmarkCachedFetch(b *testing.B) {
	page := bigPage(1 << 20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	}))
	defer srv.Close()
	wf := Tools(Options{Network: loopback})[0]
	env := &tool.Env{Services: &tool.Services{}}
	in := []byte(fmt.Sprintf(`{"url":%q,"prompt":"what is it?"}`, srv.URL+"/big"))
	ctx := context.Background()
	if _, err := wf.Call(ctx, env, in); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := wf.Call(ctx, env, in); err != nil {
			b.Fatal(err)
		}
	}
}
