package file

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // image.DecodeConfig of GIFs
	_ "image/jpeg" // image.DecodeConfig of JPEGs
	_ "image/png"  // image.DecodeConfig of PNGs
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/ledongthuc/pdf"

	"github.com/gantry-dev/gantry/tool"
)

func (r *reader) readImage(f *os.File, info fs.FileInfo, path, key string, files tool.FileStates, head []byte) (*tool.Result, error) {
	mime := imageMIME(head)
	if info.Size() > r.opts.MaxImageBytes {
		return failure(fmt.Errorf("%s is a %s image of %s, over the %s limit for an image. Resize it first (for example with a command through Bash)",
			path, mime, humanSize(info.Size()), humanSize(r.opts.MaxImageBytes))), nil
	}
	data, err := io.ReadAll(io.LimitReader(f, r.opts.MaxImageBytes+1))
	if err != nil {
		return failure(fmt.Errorf("read %s: %w", path, err)), nil
	}
	if int64(len(data)) > r.opts.MaxImageBytes {
		return failure(fmt.Errorf("%s grew past the %s image limit while it was read", path, humanSize(r.opts.MaxImageBytes))), nil
	}
	desc := fmt.Sprintf("Image %s (%s, %s", path, mime, humanSize(int64(len(data))))
	out := ImageRead{Data: data, MIMEType: mime}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil {
		desc += fmt.Sprintf(", %dx%d", cfg.Width, cfg.Height)
		out.Width, out.Height = cfg.Width, cfg.Height
	}
	desc += ")"
	if files != nil {
		files.Put(readState(key, info, hashBytes(data), 0, 0, false, r.opts.Now()))
	}
	return &tool.Result{
		Content:    []tool.Content{tool.Text(desc), tool.Image(data, mime)},
		Display:    []tool.Content{tool.Text(EscapeDisplay(desc))},
		Structured: out,
	}, nil
}

// parsePages parses a PDF page range: "N" or "N-M" (1-based, inclusive), at
// most max pages.
func parsePages(s string, max int) (first, last int, err error) {
	s = strings.TrimSpace(s)
	a, b, isRange := strings.Cut(s, "-")
	first, err = strconv.Atoi(strings.TrimSpace(a))
	if err != nil || first < 1 {
		return 0, 0, fmt.Errorf("pages %q is not a page range; use a page number like \"3\" or a range like \"1-5\"", s)
	}
	last = first
	if isRange {
		last, err = strconv.Atoi(strings.TrimSpace(b))
		if err != nil || last < first {
			return 0, 0, fmt.Errorf("pages %q is not a page range; use a page number like \"3\" or a range like \"1-5\" (first <= last)", s)
		}
	}
	if last-first+1 > max {
		return 0, 0, fmt.Errorf("pages %q spans %d pages; read at most %d pages per call", s, last-first+1, max)
	}
	return first, last, nil
}

// maxPDFSize bounds the PDFs Read parses.
const maxPDFSize = 32 << 20

func (r *reader) readPDF(f *os.File, info fs.FileInfo, path, key string, files tool.FileStates, pages string) (res *tool.Result, err error) {
	if info.Size() > maxPDFSize {
		return failure(fmt.Errorf("%s is a PDF of %s, over the %s limit", path, humanSize(info.Size()), humanSize(maxPDFSize))), nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPDFSize+1))
	if err != nil {
		return failure(fmt.Errorf("read %s: %w", path, err)), nil
	}
	text, first, last, n, err := pdfText(data, pages, r.opts.MaxPDFPages)
	if err != nil {
		return failure(fmt.Errorf("PDF %s: %w", path, err)), nil
	}
	if files != nil {
		files.Put(readState(key, info, hashBytes(data), 0, 0, first > 1 || last < n, r.opts.Now()))
	}
	summary := fmt.Sprintf("Read pages %d-%d of %s (%d pages)", first, last, path, n)
	content := []tool.Content{tool.Text(text)}
	if last < n {
		content = append(content, tool.Text(fmt.Sprintf("Showing pages %d-%d of %d. Read more with pages=\"%d-%d\".", first, last, n, last+1, min(n, last+r.opts.MaxPDFPages))))
	}
	return &tool.Result{Content: content, Display: []tool.Content{tool.Text(EscapeDisplay(summary))}}, nil
}

// pdfText extracts the text of the pages of a PDF. The parser is recovered
// from: a malformed PDF is an error, never a panic.
func pdfText(data []byte, pages string, maxPages int) (text string, first, last, n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cannot parse it: %v", p)
		}
	}()
	rd, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", 0, 0, 0, fmt.Errorf("cannot parse it: %w", err)
	}
	n = rd.NumPage()
	if n <= 0 {
		return "", 0, 0, 0, errors.New("it has no pages")
	}
	if pages == "" {
		if n > maxPages {
			return "", 0, 0, n, fmt.Errorf("it has %d pages; pass pages (for example \"1-%d\") to read at most %d per call", n, maxPages, maxPages)
		}
		first, last = 1, n
	} else {
		first, last, err = parsePages(pages, maxPages)
		if err != nil {
			return "", 0, 0, n, err
		}
		if first > n {
			return "", 0, 0, n, fmt.Errorf("page %d is past the end: it has %d pages", first, n)
		}
		last = min(last, n)
	}
	var b strings.Builder
	for i := first; i <= last; i++ {
		p := rd.Page(i)
		t, err := p.GetPlainText(nil) // nil: the page's own fonts
		if err != nil {
			return "", 0, 0, n, fmt.Errorf("page %d: %w", i, err)
		}
		fmt.Fprintf(&b, "--- Page %d ---\n%s\n", i, strings.TrimSpace(strings.ToValidUTF8(t, "\uFFFD")))
	}
	return b.String(), first, last, n, nil
}

// PDFText extracts the text of pages first to last (1-based, inclusive; a
// last past the end stops at the last page) of the PDF in data, one
// "--- Page N ---" section per page, and returns it with the page count.
// It is Read's extractor, shared with WebFetch: a malformed PDF is an
// error, never a panic.
func PDFText(data []byte, first, last int) (text string, pages int, err error) {
	if first < 1 || last < first {
		return "", 0, fmt.Errorf("bad page range %d-%d", first, last)
	}
	text, _, _, pages, err = pdfText(data, fmt.Sprintf("%d-%d", first, last), last-first+1)
	return text, pages, err
}
