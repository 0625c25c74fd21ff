package grep

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
)

// searchGo runs q with the pure Go engine.
func searchGo(ctx context.Context, q *Query, o Options, isDir bool, c *collector) error {
	if !isDir {
		// A file named explicitly is searched whatever the filters say.
		dir, name := filepath.Split(q.Root)
		searchFile(q, o, &worker{}, fileEntry{dir: &dirJob{path: filepath.Clean(dir), fd: -1}, name: name}, c)
		return ctx.Err()
	}
	ov, err := newOverrides(q.Root, q.Globs)
	if err != nil {
		return err
	}
	var tf *typeFilter
	if q.TypeGlobs != nil {
		tf = &typeFilter{globs: q.TypeGlobs}
	}
	cfg := &walkConfig{
		root:    q.Root,
		workers: o.Workers,
		filter:  filter{overrides: ov, types: tf, skipHidden: true},
		batch:   16,
	}
	return walk(ctx, cfg, func(w *worker, f fileEntry) {
		searchFile(q, o, w, f, c)
	})
}

// bigBuffer is the size above which a worker's file buffer is released
// after use rather than kept for the next file; minBuffer is the size a
// worker's buffer starts with.
const (
	bigBuffer = 8 << 20
	minBuffer = 256 << 10
)

// searchFile searches one file and adds its result to c.
func searchFile(q *Query, o Options, w *worker, f fileEntry, c *collector) {
	// A file larger than the buffer is searched a buffer of whole lines
	// at a time, so that the buffer does not grow to hold it — but with
	// multiline (one text) or context lines (which may lie in an earlier
	// buffer).
	chunked := !q.m.multiline && q.Before == 0 && q.After == 0
	of, buf, more, ok := readFile(w, f, o.MaxFileSize, chunked)
	defer func() {
		if cap(w.buf) > bigBuffer {
			w.buf, w.low = nil, nil
		}
	}()
	if !ok {
		return
	}
	defer of.close()
	fl := &w.lines
	fl.reset(q, o)
	first := q.Mode == ModeFiles
	if more {
		if !q.m.scanChunks(w, of, buf, o.MaxFileSize, first, fl) {
			return
		}
	} else if buf, ok = q.m.scanWhole(buf, w, first, fl); !ok {
		return
	}
	fr := FileResult{Path: f.path()}
	switch q.Mode {
	case ModeFiles:
		fr.ModTime = of.modTime()
	case ModeCount:
		fr.MatchedLines, fr.Matches = fl.matched, fl.matches
	default:
		if q.Before > 0 || q.After > 0 {
			addContextGo(buf, fl, q.Before, q.After)
		}
		fr.Lines = fl.finish()
		fr.MatchedLines, fr.Matches = fl.matched, fl.matches
		fl.lines, fl.nums = nil, nil // now fr's
	}
	c.add(fr)
}

// scanWhole searches the whole file buf (see scan), applying the binary
// rule: a NUL byte in the first chunk skips the file; a later NUL ends the
// search before the line that holds it (ripgrep stops there too). With
// multiline the whole file is one chunk. With a literal prefilter the
// search runs first and only a file with a match is looked at for a NUL
// (most files have no match, so most are read by one pass over their
// bytes, not two); otherwise binary files are left out before the slower
// regexp runs over them. It returns the text searched (buf, or buf cut
// before a NUL byte's line), where context lines are taken from.
func (m *matcher) scanWhole(buf []byte, w *worker, first bool, fl *fileLines) ([]byte, bool) {
	if m.pre == nil || m.multiline {
		buf, binary := cutBinary(buf, m.multiline)
		return buf, !binary && m.scan(buf, w, first, fl)
	}
	if !m.scan(buf, w, first, fl) {
		return nil, false
	}
	cut, binary := cutBinary(buf, false)
	if binary {
		return nil, false
	}
	if len(cut) < len(buf) {
		fl.restart()
		return cut, m.scan(cut, w, first, fl)
	}
	return buf, true
}

// restart forgets what f recorded of the current file.
func (f *fileLines) restart() {
	lines, nums := f.lines[:0], f.nums
	clear(nums)
	*f = fileLines{q: f.q, maxCols: f.maxCols, limit: f.limit, lines: lines, nums: nums}
}

// cutBinary applies the binary-file rule to buf: binary is true when a NUL
// byte sits in the first binaryChunk bytes (or anywhere, with multiline);
// otherwise buf is cut at the start of the line holding the first NUL.
func cutBinary(buf []byte, multiline bool) (cut []byte, binary bool) {
	i := bytes.IndexByte(buf, 0)
	switch {
	case i < 0:
		return buf, false
	case i < binaryChunk || multiline:
		return nil, true
	}
	return buf[:bytes.LastIndexByte(buf[:i], '\n')+1], false
}

// scanChunks searches a file larger than w's buffer like scan, reading it
// on from of into the buffer: buf is the first full buffer. Each buffer's
// whole lines are searched (a line longer than the buffer grows it), the
// rest is moved to the front for the next read; line numbers go on from
// buffer to buffer. A NUL byte ends the search before its line, as
// cutBinary does (the first binaryChunk bytes have none: readFile checked
// them).
func (m *matcher) scanChunks(w *worker, of openFile, buf []byte, limit int64, first bool, fl *fileLines) bool {
	total, more, found := int64(len(buf)), true, false
	for {
		end := len(buf)
		if more {
			end = bytes.LastIndexByte(buf, '\n') + 1
		}
		if end > 0 || !more {
			region, last := buf[:end], !more
			if i := bytes.IndexByte(region, 0); i >= 0 {
				region, last = region[:bytes.LastIndexByte(region[:i], '\n')+1], true
			}
			if m.scan(region, w, first, fl) {
				found = true
				if first {
					return true
				}
			}
			if last || fl.full() {
				return found
			}
			if !first {
				fl.base += bytes.Count(region, []byte{'\n'})
			}
		}
		// Keep the partial last line, grow for a line longer than the
		// buffer, and read on.
		keep := copy(buf, buf[end:])
		b := buf[:cap(buf)]
		if keep == len(b) {
			b = make([]byte, 2*len(b))
			copy(b, buf)
		}
		w.buf = b
		n, mo, ok := of.readMore(b[keep:])
		total += int64(n)
		if !ok || total > limit {
			return false
		}
		buf, more = b[:keep+n], mo
	}
}

func readFull(r io.Reader, buf []byte) (int, error) {
	n, err := io.ReadFull(r, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return n, err
}

// scan finds the matches of m in buf and records them in fl. With first it
// returns at the first match. It reports whether there was a match.
func (m *matcher) scan(buf []byte, w *worker, first bool, fl *fileLines) bool {
	if m.multiline {
		return m.scanMultiline(buf, first, fl)
	}
	found := false
	pos, num, numPos := 0, 1, 0
	subs := w.subs[:0]
	defer func() { w.subs = subs[:0] }()
	next := w.next[:0]
	for range m.pre {
		next = append(next, -2)
	}
	w.next = next
	for pos < len(buf) && !fl.full() {
		var at int
		if m.pre != nil {
			at = m.candidate(buf, pos, next)
			if at < 0 {
				break
			}
		} else {
			loc := m.re.FindIndex(buf[pos:])
			if loc == nil {
				break
			}
			at = pos + loc[0]
		}
		ls := pos + bytes.LastIndexByte(buf[pos:min(at, len(buf))], '\n') + 1
		if ls >= len(buf) {
			break // an empty match after the final line break: no line there
		}
		le := len(buf)
		if i := bytes.IndexByte(buf[at:], '\n'); i >= 0 {
			le = at + i
		}
		var low []byte
		if m.fold && m.lit != nil {
			w.low = lowerASCII(w.low, buf[ls:le])
			low = w.low
		}
		subs = m.lineMatches(subs[:0], buf[ls:le], low)
		if len(subs) > 0 {
			found = true
			if first {
				return true
			}
			num += bytes.Count(buf[numPos:ls], []byte{'\n'})
			numPos = ls
			fl.addMatch(buf[ls:le], fl.base+num, subs)
		}
		pos = le + 1
	}
	return found
}

// candidate returns the first position at or after pos where one of the
// prefilter's literals starts, or -1. next caches each literal's next
// position from earlier calls of one scan (-2: unknown, -1: none left).
func (m *matcher) candidate(hay []byte, pos int, next []int) int {
	at := -1
	for i, f := range m.pre {
		if next[i] == -1 {
			continue
		}
		if next[i] < pos {
			next[i] = -1
			if j := f.index(hay[pos:]); j >= 0 {
				next[i] = pos + j
			}
		}
		if next[i] >= 0 && (at < 0 || next[i] < at) {
			at = next[i]
		}
	}
	return at
}

func (m *matcher) scanMultiline(buf []byte, first bool, fl *fileLines) bool {
	n := -1
	if first {
		n = 1
	}
	locs := m.re.FindAllIndex(buf, n)
	num, numPos := 1, 0
	found := false
	for _, loc := range locs {
		s, e := loc[0], loc[1]
		ls := bytes.LastIndexByte(buf[:s], '\n') + 1
		if ls >= len(buf) {
			break
		}
		found = true
		if first {
			return true
		}
		last := s
		if e > s {
			last = e - 1
		}
		le := len(buf)
		if i := bytes.IndexByte(buf[last:], '\n'); i >= 0 {
			le = last + i
		}
		num += bytes.Count(buf[numPos:ls], []byte{'\n'})
		numPos = ls
		fl.addMatch(buf[ls:le], num, [][2]int{{s - ls, e - ls}})
		if fl.full() {
			break
		}
	}
	return found
}

// addContextGo adds the context lines around fl's match lines.
func addContextGo(buf []byte, fl *fileLines, before, after int) {
	type span struct{ lo, hi int }
	var spans []span
	for _, l := range fl.lines {
		if !l.Match {
			continue
		}
		lo, hi := max(1, l.Num-before), l.Num+after
		if n := len(spans); n > 0 && lo <= spans[n-1].hi+1 {
			spans[n-1].hi = max(spans[n-1].hi, hi)
			continue
		}
		spans = append(spans, span{lo, hi})
	}
	si := 0
	for start, num := 0, 1; start < len(buf) && si < len(spans); num++ {
		end := len(buf)
		if i := bytes.IndexByte(buf[start:], '\n'); i >= 0 {
			end = start + i
		}
		for si < len(spans) && num > spans[si].hi {
			si++
		}
		if si < len(spans) && num >= spans[si].lo {
			fl.addContext(buf[start:end], num)
		}
		start = end + 1
	}
}
