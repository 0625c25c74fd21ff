// Package outbuf captures the output of a command in bounded memory: a
// [Buffer] keeps the first and the last bytes of the stream, spills the whole
// stream to a file once it outgrows them, and stops accepting output at a
// hard limit, calling a function (which kills the command) once.
//
// It also holds the text cleaning every output shown to a model or a person
// needs: [StripEscapes] for the model channel and [EscapeDisplay] for the
// display channel.
package outbuf

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"unicode/utf8"
)

// Defaults of [Options].
const (
	DefaultHeadBytes = 64 << 10
	DefaultTailBytes = 64 << 10
	DefaultLimit     = 100 << 20
)

// Options configure a [Buffer]. The zero value keeps 64 KiB of head and of
// tail, never spills, and stops at 100 MiB.
type Options struct {
	// HeadBytes and TailBytes bound the bytes kept in memory from the start
	// and the end of the stream. Zero means the defaults.
	HeadBytes, TailBytes int
	// Limit is the hard cap on the bytes accepted. Past it, the rest is
	// dropped and OnLimit is called once. Zero means [DefaultLimit];
	// negative means no limit.
	Limit int64
	// OnLimit is called once, from the writing goroutine, when the limit is
	// reached (typically it kills the command).
	OnLimit func()
	// Dir, if set, is where the whole stream is spilled once it no longer
	// fits in head and tail: a new file named by Pattern (os.CreateTemp
	// syntax, default "output-*.txt").
	Dir, Pattern string
	// Path, if set, is a file created at once (truncated) that receives the
	// whole stream from the first byte; it wins over Dir.
	Path string
}

// Buffer is a bounded output sink, safe for concurrent use. Create it with
// [New]; Close it to close its file.
type Buffer struct {
	mu      sync.Mutex
	opt     Options
	head    []byte
	tail    []byte // ring of the last TailBytes bytes
	tailPos int    // next write position in tail once it is full
	full    bool   // tail ring wrapped
	total   int64
	dropped int64
	limited bool
	file    *os.File
	path    string
	fileErr error
}

// New returns a Buffer. It fails only when Options.Path cannot be created.
func New(opt Options) (*Buffer, error) {
	if opt.HeadBytes <= 0 {
		opt.HeadBytes = DefaultHeadBytes
	}
	if opt.TailBytes <= 0 {
		opt.TailBytes = DefaultTailBytes
	}
	if opt.Limit == 0 {
		opt.Limit = DefaultLimit
	}
	if opt.Pattern == "" {
		opt.Pattern = "output-*.txt"
	}
	b := &Buffer{opt: opt}
	if opt.Path != "" {
		f, err := os.OpenFile(opt.Path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, fmt.Errorf("outbuf: %w", err)
		}
		b.file, b.path = f, opt.Path
	}
	return b, nil
}

// Write accepts p. It never fails: past the limit output is counted as
// dropped, and a failing spill file is reported by [Buffer.FileErr].
func (b *Buffer) Write(p []byte) (int, error) {
	n := len(p)
	var onLimit func()
	b.mu.Lock()
	if b.opt.Limit >= 0 {
		room := b.opt.Limit - b.total
		if room <= 0 {
			b.dropped += int64(len(p))
			p = nil
		} else if int64(len(p)) > room {
			b.dropped += int64(len(p)) - room
			p = p[:room]
		}
		if len(p) == 0 || b.total+int64(len(p)) >= b.opt.Limit {
			if !b.limited {
				b.limited = true
				onLimit = b.opt.OnLimit
			}
		}
	}
	if len(p) > 0 {
		b.write(p)
	}
	b.mu.Unlock()
	if onLimit != nil {
		onLimit()
	}
	return n, nil
}

func (b *Buffer) write(p []byte) {
	if b.file == nil && b.opt.Dir != "" && b.fileErr == nil &&
		b.total+int64(len(p)) > int64(b.opt.HeadBytes+b.opt.TailBytes) {
		// About to lose bytes from memory: everything so far is still in
		// head + tail (no gap yet), so the file gets the whole stream.
		f, err := os.CreateTemp(b.opt.Dir, b.opt.Pattern)
		if err != nil {
			b.fileErr = fmt.Errorf("outbuf: spill file: %w", err)
		} else {
			b.file, b.path = f, f.Name()
			if _, err := f.Write(b.head); err == nil {
				_, err = f.Write(b.tailBytes())
				b.fileErr = err
			} else {
				b.fileErr = err
			}
		}
	}
	if b.file != nil && b.fileErr == nil {
		if _, err := b.file.Write(p); err != nil {
			b.fileErr = fmt.Errorf("outbuf: write spill file: %w", err)
		}
	}
	b.total += int64(len(p))
	if room := b.opt.HeadBytes - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return
	}
	t := b.opt.TailBytes
	if len(p) >= t {
		b.tail = append(b.tail[:0], p[len(p)-t:]...)
		b.tailPos, b.full = 0, true
		return
	}
	if !b.full {
		if room := t - len(b.tail); len(p) <= room {
			b.tail = append(b.tail, p...)
			if len(b.tail) == t {
				b.full, b.tailPos = true, 0
			}
			return
		}
		// Fill up, then wrap.
		room := t - len(b.tail)
		b.tail = append(b.tail, p[:room]...)
		p = p[room:]
		b.full, b.tailPos = true, 0
	}
	for len(p) > 0 {
		k := copy(b.tail[b.tailPos:], p)
		p = p[k:]
		b.tailPos = (b.tailPos + k) % t
	}
}

// tailBytes returns the tail ring in order.
func (b *Buffer) tailBytes() []byte {
	if !b.full {
		return append([]byte(nil), b.tail...)
	}
	out := make([]byte, 0, len(b.tail))
	out = append(out, b.tail[b.tailPos:]...)
	return append(out, b.tail[:b.tailPos]...)
}

// Snapshot is what a Buffer holds at one moment.
type Snapshot struct {
	// Head and Tail are the first and last bytes kept. When Elided is zero
	// they are contiguous: Head+Tail is the whole accepted stream.
	Head, Tail []byte
	// Elided is the number of bytes between Head and Tail not kept in
	// memory (they are in the file, if any).
	Elided int64
	// Total is the number of bytes accepted; Dropped the bytes refused past
	// the limit.
	Total, Dropped int64
	// Limited reports that the limit was reached.
	Limited bool
	// Path is the file holding the whole accepted stream, or "".
	Path string
}

// Complete reports whether Head+Tail is the whole accepted stream.
func (s Snapshot) Complete() bool { return s.Elided == 0 }

// Snapshot returns copies of what the Buffer holds.
func (b *Buffer) Snapshot() Snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Snapshot{
		Head:    append([]byte(nil), b.head...),
		Tail:    b.tailBytes(),
		Total:   b.total,
		Dropped: b.dropped,
		Limited: b.limited,
		Path:    b.path,
	}
	s.Elided = s.Total - int64(len(s.Head)+len(s.Tail))
	return s
}

// Last returns up to n of the last bytes written.
func (b *Buffer) Last(n int) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	all := b.tailBytes()
	if len(all) < n && !b.full && b.total <= int64(b.opt.HeadBytes+b.opt.TailBytes) {
		all = append(append([]byte(nil), b.head...), all...)
	}
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return all
}

// Len returns the number of bytes accepted.
func (b *Buffer) Len() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// Path returns the file holding the whole stream, or "" if there is none
// (yet).
func (b *Buffer) Path() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.path
}

// FileErr returns the first error writing the spill file, if any.
func (b *Buffer) FileErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fileErr
}

// Close closes the file, if any. The Buffer's memory stays readable.
func (b *Buffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.file == nil {
		return nil
	}
	err := b.file.Close()
	b.file = nil
	if b.fileErr == nil {
		b.fileErr = errors.New("outbuf: closed")
	}
	return err
}

// ReadFrom copies r into b until EOF (the stream of a command's output).
func (b *Buffer) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, 32<<10)
	var n int64
	for {
		k, err := r.Read(buf)
		if k > 0 {
			b.Write(buf[:k])
			n += int64(k)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// TrimPartialRunes drops an incomplete UTF-8 sequence at the end of head and
// at the start of tail, so that a cut made on byte boundaries does not
// produce replacement characters.
func TrimPartialRunes(head, tail []byte) ([]byte, []byte) {
	// End of head: drop up to 3 trailing bytes of an incomplete rune.
	for i := 1; i <= 3 && i <= len(head); i++ {
		c := head[len(head)-i]
		if c < 0x80 {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(head[len(head)-i:]) {
				head = head[:len(head)-i]
			}
			break
		}
	}
	// Start of tail: skip continuation bytes.
	for i := 0; i < 3 && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	return head, tail
}
