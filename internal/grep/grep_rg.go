package grep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/procenv"
)

// rgEnv are the variables ripgrep receives from Gantry's environment:
// what it needs to find its locale and nothing else.
var rgEnv = []string{"PATH", "HOME", "LANG", "LC_*"}

// ripgrepError is ripgrep refusing a query (exit status 2 before any
// result): Search in auto mode falls back to the Go engine.
type ripgrepError struct{ msg string }

func (e *ripgrepError) Error() string { return "ripgrep: " + e.msg }

// ripgrepArgs returns the rg command line of q. The flags make ripgrep's
// file selection the Go engine's: no config file, .gitignore without
// requiring a repository, no global excludes, no .ignore files, the same
// type globs, .git skipped. The size cap is not passed (--max-filesize
// costs ripgrep a stat of every file, ~15% of its time on Go's tree): the
// files with results are stat'ed afterwards and those over the cap left
// out, which gives the same results.
//
// The output format is the cheapest that carries what the mode needs:
// file names (files_with_matches); numbered lines under a file heading
// (content and count); JSON events with match offsets only for -o and
// multiline, which need them.
func ripgrepArgs(q *Query, o Options) []string {
	args := []string{
		"--no-config", "--no-messages",
		"--no-ignore-global", "--no-ignore-dot", "--no-require-git",
		"--threads=" + strconv.Itoa(o.Workers),
	}
	switch ripgrepFormat(q) {
	case rgFiles:
		args = append(args, "--files-with-matches", "--null")
	case rgPlain:
		args = append(args, "--heading", "--with-filename", "--null", "--line-number", "--no-context-separator", "--color=never")
	default:
		args = append(args, "--json")
	}
	if q.Multiline {
		args = append(args, "--multiline", "--multiline-dotall")
	}
	if q.Mode == ModeContent {
		if q.Before > 0 {
			args = append(args, "--before-context="+strconv.Itoa(q.Before))
		}
		if q.After > 0 {
			args = append(args, "--after-context="+strconv.Itoa(q.After))
		}
	}
	if q.TypeGlobs != nil {
		for _, g := range q.TypeGlobs {
			args = append(args, "--type-add=gantrysel:"+g)
		}
		args = append(args, "--type=gantrysel")
	}
	for _, g := range q.Globs {
		args = append(args, "--glob="+g)
	}
	// ripgrep matches globs relative to its working directory, so it runs
	// in the root and searches ".".
	args = append(args, "--glob=!.git", "--regexp="+q.m.rust, "--", ".")
	return args
}

// ripgrep output formats.
const (
	rgFiles = iota // --files-with-matches --null: "path\0" per file
	rgPlain        // --heading --null -n: "path\0", then "N:line" / "N-line", then ""
	rgJSON         // --json: events with match offsets
)

func ripgrepFormat(q *Query) int {
	switch {
	case q.Mode == ModeFiles:
		return rgFiles
	case q.OnlyMatching || q.Multiline:
		return rgJSON
	}
	return rgPlain
}

// searchRipgrep runs q with ripgrep at rg.
func searchRipgrep(ctx context.Context, rg string, q *Query, o Options, isDir bool, c *collector) error {
	if !isDir {
		// Named files are searched whatever the filters say, but binary
		// files are skipped like in the Go engine (ripgrep would search
		// them up to the first NUL).
		bin, err := isBinaryFile(q.Root)
		if err != nil || bin {
			return nil
		}
	}
	args := ripgrepArgs(q, o)
	dir := q.Root
	if !isDir {
		// "./name": every path ripgrep prints starts with "./", so no
		// line of its output that is not a numbered line starts with a
		// digit.
		dir = filepath.Dir(q.Root)
		args[len(args)-1] = "./" + filepath.Base(q.Root)
	}
	cmd := exec.CommandContext(ctx, rg, args...)
	cmd.Dir = dir
	// ripgrep gets the allow-listed environment like every process a tool
	// starts: never a credential, never RIPGREP_CONFIG_PATH (its config
	// could add --pre, which runs a program per file; --no-config above
	// ignores it too).
	cmd.Env = procenv.Build(os.Environ(), procenv.Options{Allow: rgEnv})
	cmd.WaitDelay = 2 * time.Second
	var stderr limitedBuffer
	stderr.max = 4096
	cmd.Stderr = &stderr
	out, pw, err := newRipgrepOutput()
	if err != nil {
		return fmt.Errorf("ripgrep: %w", err)
	}
	defer out.Close()
	// rg writes to the pipe itself (no copying goroutine in between).
	cmd.Stdout = pw
	err = cmd.Start()
	pw.Close()
	if err != nil {
		return fmt.Errorf("ripgrep: %w", err)
	}
	out.started(cmd.Process.Pid)
	var results int
	var perr error
	switch ripgrepFormat(q) {
	case rgFiles:
		results, perr = parseRipgrepFiles(ctx, out, dir, o.MaxFileSize, c)
	case rgPlain:
		results, perr = parseRipgrepPlain(ctx, out, dir, q, o, c)
	default:
		results, perr = parseRipgrepJSON(ctx, out, dir, q, o, c)
	}
	if perr != nil {
		_ = cmd.Process.Kill()
	}
	// Closing the read end makes a ripgrep still writing (after a parse
	// error) fail instead of waiting for room.
	out.Close()
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if perr != nil {
		return perr
	}
	var exit *exec.ExitError
	if errors.As(werr, &exit) {
		if exit.ExitCode() == 1 {
			return nil // no match
		}
		if results == 0 {
			msg := strings.TrimSpace(stderr.String())
			if msg == "" {
				msg = werr.Error()
			}
			return &ripgrepError{msg: msg}
		}
		return nil // some files could not be read: like --no-messages
	}
	if werr != nil {
		return fmt.Errorf("ripgrep: %w", werr)
	}
	return nil
}

// ripgrepPipeSize is the pipe ripgrep writes to when the kernel allows it:
// room for a few milliseconds of output at any rate ripgrep prints at.
const ripgrepPipeSize = 1 << 20

// ripgrepPace is how long the reader of ripgrep's output pauses after a
// short read, unless ripgrep exits first (see ripgrepOutput).
const ripgrepPace = 5 * time.Millisecond

// ripgrepMaxPace bounds the pause after reads that found nothing: at any
// rate under ~50 KB/ms ripgrep fills less than the 1 MiB pipe meanwhile,
// and a faster ripgrep is read without pauses (its reads are not short).
const ripgrepMaxPace = 20 * time.Millisecond

// absPath turns a path ripgrep printed (relative to dir) into an absolute
// one, and returns the relative form without its "./" too.
func absPath(dir, p string) (abs, rel string) {
	p = strings.TrimPrefix(p, "./")
	if filepath.IsAbs(p) {
		return p, p
	}
	return joinPath(dir, p), p
}

// statCap stats the file at path and reports whether it is within the size
// cap, with its modification time. A file that cannot be stat'ed any more
// is kept.
func statCap(path string, limit int64) (time.Time, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}, true
	}
	return fi.ModTime(), fi.Size() <= limit
}

func parseRipgrepFiles(ctx context.Context, out io.Reader, dir string, limit int64, c *collector) (int, error) {
	r := bufio.NewReaderSize(out, 64<<10)
	sizes := newCapStat(dir, limit)
	defer sizes.close()
	n := 0
	for {
		path, err := r.ReadString(0)
		if path = strings.TrimSuffix(path, "\x00"); path != "" {
			path, rel := absPath(dir, path)
			if mtime, ok := sizes.within(rel, path); ok {
				c.add(FileResult{Path: path, ModTime: mtime})
				n++
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("ripgrep: read output: %w", err)
		}
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
	}
}

// rgData is ripgrep's JSON form of bytes: text when valid UTF-8, else
// base64.
type rgData struct {
	Text  *string `json:"text"`
	Bytes []byte  `json:"bytes"`
}

func (d rgData) get() []byte {
	if d.Text != nil {
		return []byte(*d.Text)
	}
	return d.Bytes
}

type rgEvent struct {
	Type string `json:"type"`
	Data struct {
		Path       rgData `json:"path"`
		Lines      rgData `json:"lines"`
		LineNumber int    `json:"line_number"`
		Submatches []struct {
			Start int `json:"start"`
			End   int `json:"end"`
		} `json:"submatches"`
	} `json:"data"`
}

func parseRipgrepJSON(ctx context.Context, out io.Reader, dir string, q *Query, o Options, c *collector) (int, error) {
	r := bufio.NewReaderSize(out, 256<<10)
	sizes := newCapStat(dir, o.MaxFileSize)
	defer sizes.close()
	files := map[string]*fileLines{}
	n := 0
	var line []byte
	var subs [][2]int
	for {
		chunk, isPrefix, err := r.ReadLine()
		line = append(line[:0], chunk...)
		for isPrefix && err == nil {
			chunk, isPrefix, err = r.ReadLine()
			line = append(line, chunk...)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("ripgrep: read output: %w", err)
		}
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		if !bytes.HasPrefix(line, []byte(`{"type":"match"`)) &&
			!bytes.HasPrefix(line, []byte(`{"type":"context"`)) &&
			!bytes.HasPrefix(line, []byte(`{"type":"end"`)) {
			continue
		}
		var ev rgEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return n, fmt.Errorf("ripgrep: bad JSON output: %w", err)
		}
		path, rel := absPath(dir, string(ev.Data.Path.get()))
		fl := files[path]
		switch ev.Type {
		case "match":
			if fl == nil {
				fl = newFileLines(q, o)
				files[path] = fl
			}
			if fl.full() {
				continue
			}
			subs = subs[:0]
			for _, s := range ev.Data.Submatches {
				subs = append(subs, [2]int{s.Start, s.End})
			}
			fl.addMatch(ev.Data.Lines.get(), ev.Data.LineNumber, subs)
		case "context":
			if fl == nil {
				fl = newFileLines(q, o)
				files[path] = fl
			}
			if !fl.full() {
				fl.addContext(ev.Data.Lines.get(), ev.Data.LineNumber)
			}
		case "end":
			if _, ok := sizes.within(rel, path); fl == nil || fl.matched == 0 || !ok {
				delete(files, path)
				continue
			}
			fr := FileResult{Path: path, MatchedLines: fl.matched, Matches: fl.matches}
			if q.Mode == ModeContent {
				fr.Lines = fl.finish()
			}
			c.add(fr)
			delete(files, path)
			n++
		}
	}
}

// parseRipgrepPlain reads ripgrep's heading output: a file's path and a
// NUL byte, its numbered lines ("N:text" for a match, "N-text" for
// context), and an empty line. Any other line (ripgrep's note that it
// stopped at a binary file's NUL byte, which starts with the file's path,
// "./…") is skipped. A file's lines arrive together (ripgrep buffers each
// file's output), each once and in order, context merged by ripgrep; a
// path seen twice is an error.
func parseRipgrepPlain(ctx context.Context, out io.Reader, dir string, q *Query, o Options, c *collector) (int, error) {
	r := bufio.NewReaderSize(out, 256<<10)
	sizes := newCapStat(dir, o.MaxFileSize)
	defer sizes.close()
	n := 0
	var (
		path  string
		rel   string
		fl    *fileLines
		spare fileLines // one file's line storage, reused
		seen  = map[string]bool{}
		line  []byte
	)
	finish := func() {
		if fl == nil {
			return
		}
		if _, ok := sizes.within(rel, path); ok && fl.matched > 0 {
			fr := FileResult{Path: path, MatchedLines: fl.matched, Matches: fl.matches}
			if q.Mode == ModeContent {
				fr.Lines = fl.finish()
				fl.lines = nil // handed on
			}
			c.add(fr)
			n++
		}
		fl = nil
	}
	for {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		if fl == nil {
			// A file's heading: its path up to the NUL byte.
			p, err := readRecord(r, 0, &line)
			if err == io.EOF && len(p) == 0 {
				return n, nil
			}
			if err != nil {
				return n, fmt.Errorf("ripgrep: read output: %w", err)
			}
			path, rel = absPath(dir, string(p))
			if seen[path] {
				return n, &ripgrepError{msg: "output of " + path + " in two places"}
			}
			seen[path] = true
			spare.reset(q, o)
			fl = &spare
			continue
		}
		l, err := readRecord(r, '\n', &line)
		if err == io.EOF && len(l) == 0 {
			finish()
			return n, nil
		}
		if err != nil && err != io.EOF {
			return n, fmt.Errorf("ripgrep: read output: %w", err)
		}
		if len(l) == 0 {
			finish()
			continue
		}
		if num, sep, text, ok := numberedLine(l); ok {
			fl.addLine(num, sep == ':', text)
		}
	}
}

// readRecord reads up to and without delim, reusing *buf for a record
// longer than r's buffer. At the end of the output it returns what is left
// with io.EOF.
func readRecord(r *bufio.Reader, delim byte, buf *[]byte) ([]byte, error) {
	b, err := r.ReadSlice(delim)
	if err == nil {
		return b[:len(b)-1], nil
	}
	if err != bufio.ErrBufferFull {
		return b, err
	}
	*buf = append((*buf)[:0], b...)
	for {
		b, err = r.ReadSlice(delim)
		*buf = append(*buf, b...)
		switch err {
		case nil:
			return (*buf)[:len(*buf)-1], nil
		case bufio.ErrBufferFull:
			continue
		}
		return *buf, err
	}
}

// numberedLine splits "N:text" or "N-text".
func numberedLine(l []byte) (num int, sep byte, text []byte, ok bool) {
	i := 0
	for i < len(l) && '0' <= l[i] && l[i] <= '9' {
		if num > (math.MaxInt-9)/10 {
			return 0, 0, nil, false
		}
		num = num*10 + int(l[i]-'0')
		i++
	}
	if i == 0 || i == len(l) || (l[i] != ':' && l[i] != '-') {
		return 0, 0, nil, false
	}
	return num, l[i], l[i+1:], true
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
