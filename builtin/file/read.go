package file

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gantry-dev/gantry/internal/textutil"

	"github.com/gantry-dev/gantry/tool"
)

// ReadInput is the input of the Read tool.
type ReadInput struct {
	FilePath   string   `json:"file_path" jsonschema:"The file to read: an absolute path, or a path relative to the working directory"`
	Offset     *float64 `json:"offset,omitempty" jsonschema:"The 1-based line number to start reading from. Give it (with limit) for files too large to read at once"`
	Limit      *float64 `json:"limit,omitempty" jsonschema:"The number of lines to read (default 2000)"`
	Pages      string   `json:"pages,omitempty" jsonschema:"PDF files only: the page range to read, like \"3\" or \"1-5\" (at most 20 pages per call)"`
	AllowLarge bool     `json:"allow_large,omitempty" jsonschema:"Read a whole file larger than 256 KB in one call (up to 10 MB). Prefer offset/limit or Grep"`
}

const readDescription = `Reads a file from the local filesystem.

- file_path is an absolute path or a path relative to the working directory.
- By default up to 2000 lines from the start are returned; give offset (1-based line) and limit to read another part. Lines longer than 2000 characters are cut.
- Output is numbered like cat -n: the line number right-aligned in 6 columns, a tab, then the line. The number and the tab are not part of the file.
- A file over 256 KB must be read in parts (offset/limit) or searched with Grep, unless allow_large is set (up to 10 MB).
- Images (PNG, JPEG, GIF, WebP) are returned as images. PDFs are returned as text per page; use pages ("1-5", at most 20 pages) for long PDFs. Jupyter notebooks (.ipynb) are returned as cells with their outputs.
- Binary files are described, not shown. Directories cannot be read: use Glob.
- Reading the same unchanged range twice returns a short note instead of the content.`

type reader struct{ opts Options }

// NewRead returns the Read tool. It is read-only and concurrency-safe; it
// works without env.Files (then nothing is recorded).
func NewRead(opts Options) tool.Tool {
	r := &reader{opts: opts.withDefaults()}
	return tool.Must(tool.New("Read", readDescription, r.call,
		tool.AccessFunc(func(in ReadInput) (tool.Access, error) { return tool.Access{Reads: []string{in.FilePath}}, nil }),
		tool.BackfillFunc(func(env *tool.Env, in *ReadInput) { backfillPath(env, &in.FilePath) }),
		tool.ReadOnly(),
		tool.WithMaxResultChars(-1), // bounded by the tool itself: reading a spill file with Read would loop
		tool.ValidateFunc(func(_ context.Context, env *tool.Env, in ReadInput) error {
			_, _, err := r.check(env, in)
			return err
		}),
		tool.DescribeFunc(func(in ReadInput) string { return "Read " + describePath(in.FilePath) }),
	))
}

// readRange is the validated line range of a call. limit 0 means to the end.
type readRange struct{ offset, limit int }

func wholeNumber(name string, v *float64, min int) (int, error) {
	if v == nil {
		return 0, nil
	}
	f := *v
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
		return 0, fmt.Errorf("%s must be a whole number, got %v", name, f)
	}
	if f < float64(min) {
		return 0, fmt.Errorf("%s must be at least %d, got %v", name, min, f)
	}
	if f > math.MaxInt32 {
		return math.MaxInt32, nil
	}
	return int(f), nil
}

func (r *reader) check(env *tool.Env, in ReadInput) (string, readRange, error) {
	path, err := resolvePath(envWorkDir(env), in.FilePath)
	if err != nil {
		return "", readRange{}, err
	}
	off, err := wholeNumber("offset", in.Offset, 0)
	if err != nil {
		return "", readRange{}, err
	}
	lim, err := wholeNumber("limit", in.Limit, 1)
	if err != nil {
		return "", readRange{}, err
	}
	if off == 0 {
		off = 1
	}
	if in.Limit == nil {
		lim = r.opts.MaxLines
		if in.AllowLarge && in.Offset == nil {
			lim = 0
		}
	}
	if in.Pages != "" {
		if _, _, err := parsePages(in.Pages, r.opts.MaxPDFPages); err != nil {
			return "", readRange{}, err
		}
	}
	return path, readRange{off, lim}, nil
}

func envWorkDir(env *tool.Env) string {
	if env == nil {
		return ""
	}
	return env.WorkDir
}

func envFiles(env *tool.Env) tool.FileStates {
	if env == nil {
		return nil
	}
	return env.Files
}

func (r *reader) call(ctx context.Context, env *tool.Env, in ReadInput) (*tool.Result, error) {
	path, rng, err := r.check(env, in)
	if err != nil {
		return failure(err), nil
	}
	key := targetOf(env, in.FilePath, path)
	pl, err := openPlace(env, key)
	if err != nil {
		return failure(err), nil
	}
	f, info, err := openRegularAt(pl, path)
	pl.close()
	if err != nil {
		return failure(err), nil
	}
	defer f.Close()
	files := envFiles(env)

	var body io.Reader = f
	var head []byte
	if info.Size() == 0 {
		// Files of /proc and /sys (and other synthetic files) report size
		// 0 and have content: read what there is, up to the hard limit.
		data, err := io.ReadAll(io.LimitReader(f, r.opts.HardMaxSize))
		if err != nil {
			return failure(fmt.Errorf("read %s: %w", path, err)), nil
		}
		info = sizedInfo{info, int64(len(data))}
		body = bytes.NewReader(data)
		head = data[:min(len(data), 8192)]
	} else {
		head = make([]byte, 8192)
		n, err := f.ReadAt(head, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return failure(fmt.Errorf("read %s: %w", path, err)), nil
		}
		head = head[:n]
	}

	kind := sniff(path, head)
	if in.Pages != "" && kind != kindPDF {
		return failure(fmt.Errorf("pages applies to PDF files only; %s is not a PDF. Use offset and limit", path)), nil
	}
	switch kind {
	case kindImage:
		return r.readImage(f, info, path, key, files, head)
	case kindPDF:
		return r.readPDF(f, info, path, key, files, in.Pages)
	case kindNotebook:
		return r.readNotebook(f, info, path, key, files)
	case kindBinary:
		if files != nil {
			files.Put(readState(key, info, "", 1, 0, true, r.opts.Now()))
		}
		mime := http.DetectContentType(head)
		msg := fmt.Sprintf("%s is a binary file (%s, %s); its content is not shown. Use a tool that understands the format (for example through Bash) if you need to inspect it.", path, mime, humanSize(info.Size()))
		return &tool.Result{Content: []tool.Content{tool.Text(msg)}, Display: []tool.Content{tool.Text(EscapeDisplay(msg))}}, nil
	}
	return r.readText(ctx, body, info, path, key, files, in, rng)
}

// sizedInfo is the info of a synthetic file (size 0 on disk) with the size
// of what was read from it.
type sizedInfo struct {
	fs.FileInfo
	size int64
}

func (s sizedInfo) Size() int64 { return s.size }

// readText streams the lines of a text file.
func (r *reader) readText(ctx context.Context, body io.Reader, info fs.FileInfo, path, key string, files tool.FileStates, in ReadInput, rng readRange) (*tool.Result, error) {
	size := info.Size()
	if size == 0 {
		if files != nil {
			files.Put(readState(key, info, hashBytes(nil), 1, rng.limit, false, r.opts.Now()))
		}
		msg := fmt.Sprintf("The file %s exists but is empty (0 bytes).", path)
		return &tool.Result{Content: []tool.Content{tool.Text(msg)}, Display: []tool.Content{tool.Text(EscapeDisplay(msg))},
			Structured: TextRead{FilePath: path, StartLine: 1}}, nil
	}
	whole := in.Offset == nil && in.Limit == nil
	if whole && !in.AllowLarge && size > r.opts.MaxFileSize {
		return failure(fmt.Errorf("%s is %s, over the %s limit for reading a whole file. Read a part with offset and limit (for example offset=1, limit=500), search it with Grep, or pass allow_large=true (up to %s)",
			path, humanSize(size), humanSize(r.opts.MaxFileSize), humanSize(r.opts.HardMaxSize))), nil
	}
	if whole && in.AllowLarge && size > r.opts.HardMaxSize {
		return failure(fmt.Errorf("%s is %s, over the %s limit even with allow_large. Read it in parts with offset and limit, or search it with Grep",
			path, humanSize(size), humanSize(r.opts.HardMaxSize))), nil
	}
	_, synthetic := info.(sizedInfo) // its size and time say nothing of its content
	if files != nil && !synthetic {
		if st, ok := files.Get(key); ok && st.Offset >= 1 && st.Offset == rng.offset && st.Limit == rng.limit &&
			st.Size == size && st.ModTime.Equal(info.ModTime()) {
			msg := fmt.Sprintf("File unchanged since your last read of %s (lines from %d%s). Its content is in that earlier result; refer to it instead of reading again.",
				path, rng.offset, limitText(rng.limit))
			return &tool.Result{Content: []tool.Content{tool.Text(msg)}, Display: []tool.Content{tool.Text(EscapeDisplay(msg))}}, nil
		}
	}
	outCap := r.opts.MaxOutputBytes
	if in.AllowLarge {
		outCap = int(r.opts.HardMaxSize)
	}
	hashing := size <= r.opts.HardMaxSize
	var h hash.Hash
	src := body
	if hashing {
		h = sha256.New()
		src = io.TeeReader(body, h)
	}
	// A buffer the size of a small file, not 64 KiB for every read (the
	// size is a hint: a file that grew since is still read whole).
	bufSize := 64 << 10
	if !synthetic && size < int64(bufSize) {
		bufSize = max(int(size)+1, 512)
	}
	br := bufio.NewReaderSize(src, bufSize)
	res, err := numberLines(ctx, br, rng, r.opts.MaxLineChars, outCap)
	if err != nil {
		return failure(fmt.Errorf("read %s: %w", path, err)), nil
	}
	total := res.total
	hashStr := ""
	if hashing {
		// Hash (through the tee) and count the lines of the rest of the file.
		cw := &lineCounter{}
		if _, err := io.Copy(cw, br); err != nil {
			return failure(fmt.Errorf("read %s: %w", path, err)), nil
		}
		if !res.eof {
			total = res.consumed + cw.lines
			if cw.any && !cw.endsNL {
				total++
			}
		}
		hashStr = hex.EncodeToString(h.Sum(nil))
		// The file may have changed while it was read.
		if f, ok := body.(*os.File); ok {
			if cur, err := f.Stat(); err == nil && (cur.Size() != size || !cur.ModTime().Equal(info.ModTime())) {
				hashStr = ""
			}
		}
	}
	known := res.eof || hashing

	if res.shown == 0 {
		if known {
			return failure(fmt.Errorf("offset %d is past the end of %s, which has %d lines", rng.offset, path, total)), nil
		}
		return failure(fmt.Errorf("offset %d is past the end of %s", rng.offset, path)), nil
	}
	partial := rng.offset > 1 || !res.eof
	if files != nil {
		files.Put(readState(key, info, hashStr, rng.offset, rng.limit, partial, r.opts.Now()))
	}
	content := []tool.Content{tool.Text(res.text)}
	first, last := rng.offset, res.lastLine
	var note string
	switch {
	case res.stoppedByCap:
		note = fmt.Sprintf("Output stopped after line %d to stay under %s. Continue with offset=%d.", last, humanSize(int64(outCap)), last+1)
	case !res.eof && known:
		note = fmt.Sprintf("Showing lines %d-%d of %d. Continue with offset=%d.", first, last, total, last+1)
	case !res.eof:
		note = fmt.Sprintf("Showing lines %d-%d; the file continues. Continue with offset=%d.", first, last, last+1)
	}
	if res.cutLines > 0 {
		if note != "" {
			note += " "
		}
		note += fmt.Sprintf("%d line(s) longer than %d characters were cut.", res.cutLines, r.opts.MaxLineChars)
	}
	if note != "" {
		content = append(content, tool.Text(note))
	}
	summary := fmt.Sprintf("Read lines %d-%d of %s", first, last, path)
	if known {
		summary += fmt.Sprintf(" (%d lines)", total)
	}
	totalLines := last
	if known {
		totalLines = total
	}
	return &tool.Result{Content: content, Display: []tool.Content{tool.Text(EscapeDisplay(summary))},
		Structured: TextRead{FilePath: path, StartLine: first, NumLines: res.shown, TotalLines: totalLines, numbered: res.text}}, nil
}

func limitText(limit int) string {
	if limit == 0 {
		return " to the end"
	}
	return fmt.Sprintf(", %d lines", limit)
}

// lineCounter counts the newlines written to it.
type lineCounter struct {
	lines  int
	any    bool
	endsNL bool
}

func (c *lineCounter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		c.any = true
		c.lines += bytes.Count(p, []byte{'\n'})
		c.endsNL = p[len(p)-1] == '\n'
	}
	return len(p), nil
}

type numbered struct {
	text         string
	shown        int  // lines shown
	lastLine     int  // number of the last line shown
	consumed     int  // lines consumed from the reader
	total        int  // lines in the file, valid when eof
	eof          bool // the whole file was consumed
	stoppedByCap bool
	cutLines     int
}

// numberLines reads lines from br and formats those in rng like cat -n. Lines
// longer than maxChars are cut (at most 4*maxChars+4 bytes of a line are ever
// held); invalid UTF-8 becomes U+FFFD; a trailing CR and a leading UTF-8 BOM
// are dropped. Output stops at outCap bytes (after at least one line).
func numberLines(ctx context.Context, br *bufio.Reader, rng readRange, maxChars, outCap int) (numbered, error) {
	var res numbered
	var out strings.Builder
	maxBytes := 4*maxChars + 4
	var line []byte
	num := 0
	for {
		if num&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		want := num+1 >= rng.offset
		var cut, more bool
		var err error
		line, cut, more, err = readLine(br, line[:0], want, maxBytes)
		if err != nil {
			return res, err
		}
		if !more {
			res.eof = true
			res.total = num
			break
		}
		num++
		res.consumed = num
		if !want {
			continue
		}
		text := formatLine(line, num == 1, cut, maxChars)
		if text.cut {
			res.cutLines++
		}
		if res.shown > 0 && out.Len()+len(text.s)+8 > outCap {
			res.stoppedByCap = true
			break
		}
		writeNumbered(&out, num, text.s)
		res.shown++
		res.lastLine = num
		if rng.limit > 0 && res.shown >= rng.limit {
			// Is there more? Peek without consuming a line.
			if _, err := br.Peek(1); err != nil {
				res.eof = true
				res.total = num
			}
			break
		}
	}
	res.text = out.String()
	if out.Cap()-out.Len() > out.Len()/8 {
		// The output is kept in the conversation for the rest of the
		// session: not in a buffer grown by doubling (up to twice its size).
		res.text = strings.Clone(res.text)
	}
	return res, nil
}

func writeNumbered(out *strings.Builder, num int, text string) {
	var buf [24]byte
	digits := strconv.AppendInt(buf[:0], int64(num), 10)
	for i := len(digits); i < 6; i++ {
		out.WriteByte(' ')
	}
	out.Write(digits)
	out.WriteByte('\t')
	out.WriteString(text)
	out.WriteByte('\n')
}

type formatted struct {
	s   string
	cut bool
}

func formatLine(line []byte, first, cut bool, maxChars int) formatted {
	if first {
		line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
	}
	if !cut {
		line = bytes.TrimSuffix(line, []byte{'\r'})
	}
	s := string(line)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if head, over := textutil.Head(s, maxChars); cut || over {
		return formatted{head + " … [line cut at " + strconv.Itoa(maxChars) + " characters]", true}
	}
	return formatted{s, false}
}

// readLine reads one line from br into buf (without its "\n"), keeping at
// most maxBytes bytes when keep is set (and none otherwise). cut reports
// that bytes were dropped; more is false at the end of the input with no
// line read.
func readLine(br *bufio.Reader, buf []byte, keep bool, maxBytes int) (line []byte, cut, more bool, err error) {
	any := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			any = true
		}
		body := chunk
		nl := len(body) > 0 && body[len(body)-1] == '\n'
		if nl {
			body = body[:len(body)-1]
		}
		if keep {
			room := maxBytes - len(buf)
			if len(body) > room {
				buf = append(buf, body[:max(room, 0)]...)
				cut = true
			} else {
				buf = append(buf, body...)
			}
		}
		switch {
		case err == nil:
			return buf, cut, true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return buf, cut, any, nil
		default:
			return buf, cut, false, err
		}
	}
}

// fileKind is what Read makes of a file.
type fileKind int

const (
	kindText fileKind = iota
	kindBinary
	kindImage
	kindPDF
	kindNotebook
)

// sniff decides a file's kind from its first bytes (and, for notebooks, its
// extension).
func sniff(path string, head []byte) fileKind {
	if imageMIME(head) != "" {
		return kindImage
	}
	if bytes.HasPrefix(head, []byte("%PDF-")) {
		return kindPDF
	}
	if strings.EqualFold(filepath.Ext(path), ".ipynb") {
		return kindNotebook
	}
	if looksBinary(head) {
		return kindBinary
	}
	return kindText
}

// imageMIME returns the MIME type of a PNG, JPEG, GIF or WebP image by its
// magic bytes, or "".
func imageMIME(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && bytes.HasPrefix(head, []byte("RIFF")) && string(head[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// looksBinary reports content that is not text: a NUL byte, or more than
// 30% control bytes (other than tab, newline, CR, form feed, ESC) or invalid
// UTF-8 in the sample.
func looksBinary(head []byte) bool {
	if len(head) == 0 {
		return false
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	bad := 0
	for i := 0; i < len(head); {
		c := head[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1b {
				bad++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size == 1 {
			// A rune cut by the end of the sample is not evidence.
			if len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:]) {
				break
			}
			bad++
		}
		i += size
	}
	return bad*10 > len(head)*3
}

// failure is an error result whose display copy is escaped.
func failure(err error) *tool.Result {
	msg := err.Error()
	return &tool.Result{Content: []tool.Content{tool.Text(msg)}, Display: []tool.Content{tool.Text(EscapeDisplay(msg))}, IsError: true}
}

// describePath is a file path for a one-line call description.
func describePath(p string) string {
	p = strings.ReplaceAll(p, "\x00", `\x00`)
	return EscapeDisplay(p)
}
