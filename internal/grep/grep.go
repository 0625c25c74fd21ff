package grep

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Output modes of a [Query].
const (
	ModeContent = "content"
	ModeFiles   = "files_with_matches"
	ModeCount   = "count"
)

// Query is one Grep search. Build it, then [Query.Compile] it (Search
// compiles a query that was not).
type Query struct {
	// Root is the absolute file or directory searched.
	Root string
	// Pattern is the regular expression (Go syntax).
	Pattern string
	// Mode is ModeContent, ModeFiles or ModeCount.
	Mode string
	// Before and After are the context lines (content mode).
	Before, After int
	// LineNumbers, IgnoreCase, OnlyMatching, Multiline: the flags.
	LineNumbers, IgnoreCase, OnlyMatching, Multiline bool
	// Globs are ripgrep --glob filters.
	Globs []string
	// Type is a ripgrep type name and TypeGlobs its globs.
	Type      string
	TypeGlobs []string
	// HeadLimit (0: unlimited) and Offset page the output entries.
	HeadLimit, Offset int

	m *matcher
}

// Compile checks q and prepares it for [Search]: the type name (when
// TypeGlobs is empty) is looked up in ripgrep's table, the globs parsed
// and the pattern compiled. Its errors are for the model: they say what is
// wrong with the input.
func (q *Query) Compile() error {
	if q.Pattern == "" {
		return errors.New("pattern is empty")
	}
	if q.Type != "" && len(q.TypeGlobs) == 0 {
		globs, ok := lookupType(q.Type)
		if !ok {
			return fmt.Errorf("unknown file type %q; known types include go, js, ts, py, rust, java, c, cpp, md, json, yaml, sh, html, css (%d in all)", q.Type, len(fileTypes))
		}
		q.TypeGlobs = globs
	}
	if _, err := newOverrides("/", q.Globs); err != nil {
		return err
	}
	m, err := compilePattern(q.Pattern, q.IgnoreCase, q.Multiline)
	if err != nil {
		return err
	}
	q.m = m
	return nil
}

// SplitGlobs splits Grep's glob field into globs: on white space, and on
// commas outside braces ("*.ts,*.tsx" is two globs, "*.{ts,tsx}" one).
func SplitGlobs(s string) []string {
	var out []string
	start, depth := 0, 0
	emit := func(end int) {
		if g := strings.TrimSpace(s[start:end]); g != "" {
			out = append(out, g)
		}
		start = end + 1
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case c == '{':
			depth++
		case c == '}':
			if depth > 0 {
				depth--
			}
		case c == ',' && depth == 0, c == ' ' || c == '\t' || c == '\n':
			emit(i)
		}
	}
	if start <= len(s) {
		emit(len(s))
	}
	return out
}

// Line is one line of a file's result.
type Line struct {
	// Num is the 1-based line number.
	Num int
	// Match is false for a context line.
	Match bool
	// Text is the line without its line break (cut to MaxColumns).
	Text string
	// Parts are the matched texts of the line (only with -o).
	Parts []string
}

// FileResult is what one file contributed.
type FileResult struct {
	// Path is absolute.
	Path string
	// ModTime is set in files_with_matches mode.
	ModTime time.Time
	// Lines are the matching and context lines, in order (content mode).
	Lines []Line
	// MatchedLines and Matches count the lines with a match and the
	// matches (count mode).
	MatchedLines, Matches int
}

// Result is the outcome of one search.
type Result struct {
	Query *Query
	// Files are the files with matches: newest first in files_with_matches
	// mode, by path otherwise. In content mode, files and lines past the
	// page may have been dropped (Truncated is then true).
	Files []FileResult
	// Engine is the engine that ran ("go" or "rg").
	Engine Engine
	// Truncated: content lines were dropped to bound memory.
	Truncated bool
	// Capped: unlimited content output stopped at Options.MaxOutputBytes.
	Capped bool
}

// Search runs q with the engine opts selects.
func Search(ctx context.Context, q *Query, opts Options) (*Result, error) {
	opts = opts.WithDefaults()
	if q.m == nil {
		if err := q.Compile(); err != nil {
			return nil, err
		}
	}
	fi, err := statPath(q.Root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file or directory", q.Root)
	}
	rg := ""
	if opts.Engine == EngineRipgrep || (opts.Engine == EngineAuto && !q.m.fastInGo()) {
		rg, err = findRipgrep(opts)
		if err != nil && opts.Engine == EngineRipgrep {
			return nil, err
		}
		if q.m.rustErr != nil {
			if opts.Engine == EngineRipgrep {
				return nil, fmt.Errorf("ripgrep engine: %w", q.m.rustErr)
			}
			rg = ""
		}
	}
	if rg != "" {
		c := newCollector(q, opts)
		err := searchRipgrep(ctx, rg, q, opts, fi.IsDir(), c)
		if err == nil {
			return c.result(EngineRipgrep), nil
		}
		var rerr *ripgrepError
		if opts.Engine == EngineRipgrep || ctx.Err() != nil || !errors.As(err, &rerr) {
			return nil, err
		}
		// ripgrep refused the query (for example a size limit): fall back.
	}
	c := newCollector(q, opts)
	if err := searchGo(ctx, q, opts, fi.IsDir(), c); err != nil {
		return nil, err
	}
	return c.result(EngineGo), nil
}

func findRipgrep(opts Options) (string, error) {
	name := opts.RipgrepPath
	if name == "" {
		name = "rg"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("ripgrep engine: %w", err)
	}
	return p, nil
}

// collector gathers file results from concurrent searchers, keeping memory
// bounded in content mode: files are kept in path order and those past the
// page (offset + head_limit lines) or past MaxOutputBytes are dropped.
type collector struct {
	q        *Query
	maxCols  int
	window   int // lines needed: offset + head_limit + 1; 0 = unlimited
	maxBytes int

	mu        sync.Mutex
	files     []FileResult
	lines     int
	bytes     int
	truncated bool
	capped    bool
}

func newCollector(q *Query, o Options) *collector {
	c := &collector{q: q, maxCols: o.MaxColumns, maxBytes: o.MaxOutputBytes}
	if q.HeadLimit > 0 {
		c.window = q.Offset + q.HeadLimit + 1
	}
	return c
}

func (c *collector) add(fr FileResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.q.Mode != ModeContent {
		c.files = append(c.files, fr)
		return
	}
	if c.window > 0 && len(fr.Lines) > c.window {
		fr.Lines = fr.Lines[:c.window]
		c.truncated = true
	}
	c.files = append(c.files, fr)
	c.lines += len(fr.Lines)
	c.bytes += linesBytes(fr.Lines)
	if (c.window > 0 && c.lines > 2*c.window) || c.bytes > 2*c.maxBytes {
		c.trim()
	}
}

func linesBytes(ls []Line) int {
	n := 0
	for _, l := range ls {
		n += len(l.Text) + 16
		for _, p := range l.Parts {
			n += len(p) + 16
		}
	}
	return n
}

// trim sorts the files by path and drops those entirely past the window or
// the byte cap.
func (c *collector) trim() {
	slices.SortFunc(c.files, func(a, b FileResult) int { return cmp.Compare(a.Path, b.Path) })
	lines, nbytes := 0, 0
	for i := range c.files {
		if (c.window > 0 && lines >= c.window) || nbytes >= c.maxBytes {
			if c.window > 0 && lines >= c.window {
				c.truncated = true
			} else {
				c.capped = true
			}
			clear(c.files[i:])
			c.files = c.files[:i]
			break
		}
		lines += len(c.files[i].Lines)
		nbytes += linesBytes(c.files[i].Lines)
	}
	c.lines, c.bytes = lines, nbytes
}

func (c *collector) result(e Engine) *Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.q.Mode == ModeFiles {
		sortNewest(c.files, func(f FileResult) (time.Time, string) { return f.ModTime, f.Path })
	} else {
		c.trim()
	}
	return &Result{Query: c.q, Files: c.files, Engine: e, Truncated: c.truncated, Capped: c.capped}
}

// fileLines builds the lines of one file from match spans and context
// lines, shared by both engines so that their results are identical. Outside
// content mode it only counts.
type fileLines struct {
	q       *Query
	maxCols int
	limit   int // lines kept at most in content mode (0: all)
	lines   []Line
	nums    map[int]int // line number → index in lines, for merging
	last    int         // last matched line number (count mode)
	matched int
	matches int
	// base is added to the line numbers of a buffer searched after the
	// first: its lines' count (the Go engine's chunked reads).
	base int
}

func newFileLines(q *Query, o Options) *fileLines {
	f := &fileLines{}
	f.reset(q, o)
	return f
}

// reset makes f ready for another file, keeping its line storage unless
// it was handed on (lines set to nil).
func (f *fileLines) reset(q *Query, o Options) {
	lines, nums := f.lines[:0], f.nums
	clear(nums)
	*f = fileLines{q: q, maxCols: o.MaxColumns, lines: lines, nums: nums}
	if q.HeadLimit > 0 {
		f.limit = q.Offset + q.HeadLimit + 1
	}
}

// full reports whether no more lines will be kept.
func (f *fileLines) full() bool { return f.limit > 0 && len(f.lines) >= f.limit }

func (f *fileLines) line(num int) *Line {
	if n := len(f.lines); n > 0 && f.lines[n-1].Num == num {
		return &f.lines[n-1]
	}
	if i, ok := f.nums[num]; ok {
		return &f.lines[i]
	}
	return nil
}

func (f *fileLines) put(l Line) {
	if f.nums == nil {
		f.nums = make(map[int]int)
	}
	f.nums[l.Num] = len(f.lines)
	f.lines = append(f.lines, l)
}

// addMatch records the lines of text (one or more whole lines, the first
// numbered first; a final line break is optional) and the matches in it
// (byte offsets into text, in order, one per match). A line is a match line
// when a non-empty match covers any of its bytes or its line break, or an
// empty match sits in it.
func (f *fileLines) addMatch(text []byte, first int, subs [][2]int) {
	f.matches += len(subs)
	content := f.q.Mode == ModeContent
	start, num := 0, first
	for start <= len(text) {
		if start == len(text) && start > 0 {
			break // nothing after the final line break
		}
		end, next := len(text), len(text)+1
		if i := bytes.IndexByte(text[start:], '\n'); i >= 0 {
			end = start + i
			next = end + 1
		}
		var parts []string
		hit := false
		for _, s := range subs {
			if s[0] == s[1] {
				hit = hit || (s[0] >= start && s[0] <= end)
				continue
			}
			lo, hi := max(s[0], start), min(s[1], next)
			if lo < hi {
				hit = true
				if content && f.q.OnlyMatching {
					if p := text[lo:min(hi, end)]; len(p) > 0 {
						parts = append(parts, f.cut(p))
					}
				}
			}
		}
		if hit {
			switch {
			case !content:
				if num != f.last {
					f.matched++
					f.last = num
				}
			case f.line(num) != nil:
				l := f.line(num)
				if !l.Match {
					l.Match = true
					f.matched++
				}
				l.Parts = append(l.Parts, parts...)
			case !f.full():
				f.matched++
				f.put(Line{Num: num, Match: true, Text: f.cutLine(text[start:end]), Parts: parts})
			}
		}
		start = next
		num++
	}
}

// addLine records one line of ripgrep's plain output (a match line when
// match is set): its lines come each once and in order, so they need no
// merging. Outside content mode it only counts.
func (f *fileLines) addLine(num int, match bool, text []byte) {
	if f.full() {
		return
	}
	if match {
		f.matched++
		f.matches++
	}
	if f.q.Mode == ModeContent {
		if f.lines == nil {
			f.lines = make([]Line, 0, 4)
		}
		f.lines = append(f.lines, Line{Num: num, Match: match, Text: f.cutLine(text)})
	}
}

// addContext records context lines (text is one or more whole lines).
func (f *fileLines) addContext(text []byte, first int) {
	for num := first; len(text) > 0; num++ {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		if f.line(num) == nil {
			f.put(Line{Num: num, Text: f.cutLine(line)})
		}
	}
}

// finish returns the lines sorted by number.
func (f *fileLines) finish() []Line {
	slices.SortFunc(f.lines, func(a, b Line) int { return cmp.Compare(a.Num, b.Num) })
	return f.lines
}

func (f *fileLines) cutLine(b []byte) string {
	return f.cut(bytes.TrimSuffix(b, []byte("\r")))
}

// cut returns b as text, invalid UTF-8 replaced, cut after maxCols
// characters with a note of what was left out.
func (f *fileLines) cut(b []byte) string {
	if f.maxCols < 0 || len(b) <= f.maxCols {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	n, i := 0, 0
	for i < len(b) && n < f.maxCols {
		_, w := utf8.DecodeRune(b[i:])
		i += w
		n++
	}
	if i >= len(b) {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return strings.ToValidUTF8(string(b[:i]), "\uFFFD") + " [… " + strconv.Itoa(utf8.RuneCount(b[i:])) + " more characters]"
}

// Format renders the result the way the model reads it.
func (r *Result) Format() string {
	q := r.Query
	var entries []entry
	summary := ""
	switch q.Mode {
	case ModeFiles:
		if len(r.Files) == 0 {
			return "No files found"
		}
		entries = make([]entry, len(r.Files))
		for i := range r.Files {
			entries[i] = entry{file: int32(i), line: entryPath}
		}
	case ModeCount:
		if len(r.Files) == 0 {
			return "No matches found"
		}
		slices.SortFunc(r.Files, func(a, b FileResult) int { return cmp.Compare(a.Path, b.Path) })
		total := 0
		entries = make([]entry, len(r.Files))
		for i, f := range r.Files {
			total += r.count(f)
			entries[i] = entry{file: int32(i), line: entryCount}
		}
		what := "matching lines"
		if q.OnlyMatching {
			what = "matches"
		}
		summary = fmt.Sprintf("Found %d %s in %s.", total, what, plural(len(r.Files), "file"))
	default:
		if len(r.Files) == 0 {
			return "No matches found"
		}
		entries = contentEntries(q, r.Files)
	}
	total := len(entries)
	start := min(q.Offset, total)
	end := total
	if q.HeadLimit > 0 {
		end = min(start+q.HeadLimit, total)
	}
	paged := start > 0 || end < total || r.Truncated
	page := entries[start:end]
	if n := len(page); n > 0 && page[n-1].line == entrySep {
		page = page[:n-1] // a group separator at the page's end separates nothing
	}
	// One allocation for the text: the page's size first.
	size := 64
	for _, e := range page {
		size += r.entryLen(e) + 1
	}
	var b strings.Builder
	b.Grow(size)
	if q.Mode == ModeFiles {
		fmt.Fprintf(&b, "Found %s\n", plural(total, "file"))
	}
	for _, e := range page {
		r.writeEntry(&b, e)
		b.WriteByte('\n')
	}
	if start >= end {
		fmt.Fprintf(&b, "(no results at offset %d)\n", q.Offset)
	}
	if summary != "" {
		b.WriteString("\n" + summary + "\n")
	}
	if paged {
		fmt.Fprintf(&b, "\n[Showing results with pagination = limit: %d, offset: %d]\n", q.HeadLimit, q.Offset)
	}
	if r.Capped {
		b.WriteString("\n[Output stopped after the size cap; narrow the search or set head_limit]\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// entry is one line of Format's output, by reference into the result (the
// page is cut before any text is built): a file (its path, or path and
// count), a group separator, a line of a file, or one match of a line (-o).
type entry struct {
	file, line, part int32
}

// entry.line values that are not line indexes.
const (
	entrySep   = -1 // "--"
	entryPath  = -2 // the file's path
	entryCount = -3 // path:count
)

// count is a file's figure in count mode.
func (r *Result) count(f FileResult) int {
	if r.Query.OnlyMatching {
		return f.Matches
	}
	return f.MatchedLines
}

// entryText returns the parts of an entry's text: the file's path, the
// mark after it, the line number ("" without), and the text.
func (r *Result) entryText(e entry) (path string, mark byte, num int, text string) {
	f := &r.Files[e.file]
	switch e.line {
	case entryPath:
		return f.Path, 0, -1, ""
	case entryCount:
		return f.Path, ':', -1, strconv.Itoa(r.count(*f))
	}
	l := &f.Lines[e.line]
	mark = '-'
	if l.Match {
		mark = ':'
	}
	num = -1
	if r.Query.LineNumbers {
		num = l.Num
	}
	text = l.Text
	if e.part >= 0 {
		text = l.Parts[e.part]
	}
	return f.Path, mark, num, text
}

func (r *Result) entryLen(e entry) int {
	if e.line == entrySep {
		return 2
	}
	path, mark, num, text := r.entryText(e)
	n := len(path) + len(text)
	if mark != 0 {
		n++
	}
	if num >= 0 {
		n += decimalLen(num) + 1
	}
	return n
}

func (r *Result) writeEntry(b *strings.Builder, e entry) {
	if e.line == entrySep {
		b.WriteString("--")
		return
	}
	path, mark, num, text := r.entryText(e)
	b.WriteString(path)
	if mark != 0 {
		b.WriteByte(mark)
	}
	if num >= 0 {
		var d [20]byte
		b.Write(strconv.AppendInt(d[:0], int64(num), 10))
		b.WriteByte(mark)
	}
	b.WriteString(text)
}

func decimalLen(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

func contentEntries(q *Query, files []FileResult) []entry {
	n := 0
	for _, f := range files {
		n += len(f.Lines)
	}
	out := make([]entry, 0, n)
	sep := q.Before > 0 || q.After > 0
	for fi, f := range files {
		for i, l := range f.Lines {
			if sep && (i > 0 && l.Num != f.Lines[i-1].Num+1 || i == 0 && fi > 0) {
				out = append(out, entry{line: entrySep})
			}
			if q.OnlyMatching && l.Match {
				for p := range l.Parts {
					out = append(out, entry{file: int32(fi), line: int32(i), part: int32(p)})
				}
				continue
			}
			out = append(out, entry{file: int32(fi), line: int32(i), part: -1})
		}
	}
	return out
}

// isBinaryFile reports whether the file at path has a NUL byte in its first
// binaryChunk bytes.
func isBinaryFile(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, binaryChunk)
	n, _ := readFull(f, buf)
	return bytes.IndexByte(buf[:n], 0) >= 0, nil
}

// binaryChunk is the prefix in which a NUL byte makes a file binary
// (ripgrep's buffer size).
const binaryChunk = 64 << 10
