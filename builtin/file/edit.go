package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/gantry-dev/gantry/tool"
)

// EditInput is the input of the Edit tool.
type EditInput struct {
	FilePath   string `json:"file_path" jsonschema:"The file to change: an absolute path, or a path relative to the working directory"`
	OldString  string `json:"old_string" jsonschema:"The exact text to replace (without Read's line-number prefixes). Empty creates a new file"`
	NewString  string `json:"new_string" jsonschema:"The text to put in its place (must differ from old_string)"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_string (default false: it must occur exactly once)"`
}

const editDescription = `Replaces text in a file: old_string becomes new_string.

- Read the file in this session first; the edit fails if the file changed since.
- old_string must match the file exactly (indentation included, without Read's line-number prefix) and occur exactly once, unless replace_all is set. Add surrounding lines to make it unique.
- An empty old_string creates a new file with new_string as its content.
- CRLF line endings and a UTF-8 BOM are kept. Use NotebookEdit for .ipynb files.`

type editor struct{ c changer }

// NewEdit returns the Edit tool: not read-only, not concurrency-safe,
// destructive. It needs env.Files.
func NewEdit(opts Options) tool.Tool {
	e := &editor{changer{opts.withDefaults()}}
	return tool.Must(tool.New("Edit", editDescription, observed(func(in EditInput) string { return in.FilePath }, e.call),
		tool.AccessFunc(func(in EditInput) (tool.Access, error) { return tool.Access{Writes: []string{in.FilePath}}, nil }),
		tool.BackfillFunc(func(env *tool.Env, in *EditInput) { backfillPath(env, &in.FilePath) }),
		tool.ValidateFunc(func(_ context.Context, env *tool.Env, in EditInput) error {
			return e.check(env, in)
		}),
		tool.DescribeFunc(func(in EditInput) string { return "Edit " + describePath(in.FilePath) }),
	))
}

func (e *editor) check(env *tool.Env, in EditInput) error {
	path, err := resolvePath(envWorkDir(env), in.FilePath)
	if err != nil {
		return err
	}
	if strings.EqualFold(filepath.Ext(path), ".ipynb") {
		return fmt.Errorf("%s is a Jupyter notebook: use NotebookEdit to change its cells", path)
	}
	if in.OldString == in.NewString {
		return errors.New("old_string and new_string are the same: there is nothing to change")
	}
	return nil
}

func (e *editor) call(ctx context.Context, env *tool.Env, in EditInput) (*tool.Result, error) {
	if err := e.check(env, in); err != nil {
		return failure(err), nil
	}
	t, err := e.c.load(ctx, env, in.FilePath)
	if err != nil {
		return failure(err), nil
	}
	defer t.release()

	if in.OldString == "" {
		switch {
		case !t.exists:
		case len(bytes.TrimPrefix(t.content, []byte(utf8BOM))) == 0:
		default:
			return failure(fmt.Errorf("old_string is empty, which creates a new file, but %s exists and is not empty. Give the text to replace, or use Write to replace the whole file", t.path)), nil
		}
		data := []byte(in.NewString)
		if t.exists {
			data = append(bytes.Clone(t.content), data...) // keep a BOM of an empty file
		}
		if err := e.c.commit(env, t, data); err != nil {
			return failure(err), nil
		}
		diff, _, _ := renderDiff(t.path, string(t.content), string(data))
		r := changed(fmt.Sprintf("Created %s (%d bytes).", t.path, len(data)), diff)
		out := EditOutput{FilePath: t.path, NewString: in.NewString, StructuredPatch: ParseHunks(diff), ReplaceAll: in.ReplaceAll}
		if t.exists {
			out.OriginalFile = ptrTo(string(t.content))
		}
		r.Structured = out
		return r, nil
	}
	if !t.exists {
		return failure(fmt.Errorf("file does not exist: %s. To create it, use an empty old_string or Write", t.path)), nil
	}
	if err := e.c.fresh(env, t, false); err != nil {
		return failure(err), nil
	}
	out, ed, err := applyEdit(t.content, in.OldString, in.NewString, in.ReplaceAll)
	if err != nil {
		var nf *notFoundError
		if errors.As(err, &nf) {
			return failure(fmt.Errorf("%s in %s.%s", err, t.path, closestSnippet(t.content, in.OldString))), nil
		}
		return failure(fmt.Errorf("%s in %s", err, t.path)), nil
	}
	if err := e.c.commit(env, t, out); err != nil {
		return failure(err), nil
	}
	diff, _, _ := renderDiff(t.path, string(t.content), string(out))
	what := "1 occurrence"
	if ed.count != 1 {
		what = fmt.Sprintf("%d occurrences", ed.count)
	}
	if ed.quotes {
		what += " (matched after normalising curly quotes)"
	}
	msg := fmt.Sprintf("Edited %s: replaced %s. The edited region now reads:\n%s", t.path, what, snippetAround(out, ed.firstAt, ed.newLen))
	r := changed(msg, diff)
	r.Structured = EditOutput{FilePath: t.path, OldString: in.OldString, NewString: in.NewString, OriginalFile: ptrTo(string(t.content)),
		StructuredPatch: ParseHunks(diff), ReplaceAll: in.ReplaceAll}
	return r, nil
}

// notFoundError is applyEdit's error when old_string does not occur.
type notFoundError struct{}

func (*notFoundError) Error() string { return "old_string was not found" }

// editDone describes a successful applyEdit.
type editDone struct {
	count   int  // occurrences replaced
	quotes  bool // matched only after quote normalisation
	firstAt int  // byte offset of the first replacement in the output
	newLen  int  // its length
}

// applyEdit replaces old with new in content. The rules, in order:
//
//  1. old as given; in a file whose line breaks are mostly CRLF, a new that
//     the match did not give line breaks to (old has no "\n") gets CRLF;
//  2. in a file with CRLF, old and new with their line breaks turned into
//     CRLF (tried first when the file's line breaks are mostly CRLF);
//  3. with curly quotes (‘’“”) in the file and in old normalised to straight
//     ones, if that match is unique; new then takes the curly style of the
//     text it replaces.
//
// A UTF-8 BOM is kept. Not found is a *notFoundError; more than one match
// without replaceAll is an error giving the count.
func applyEdit(content []byte, old, new string, replaceAll bool) ([]byte, editDone, error) {
	if old == "" {
		return nil, editDone{}, errors.New("old_string is empty")
	}
	bom := ""
	if bytes.HasPrefix(content, []byte(utf8BOM)) {
		bom = utf8BOM
	}
	text := string(content[len(bom):])
	crlfFile := lineEnding([]byte(text)) == "\r\n"

	type variant struct{ o, n string }
	variants := []variant{{old, new}}
	if crlfFile && !strings.Contains(old, "\n") {
		variants[0].n = toCRLF(new)
	}
	if strings.Contains(text, "\r\n") && strings.Contains(old, "\n") {
		if o := toCRLF(old); o != old {
			v := variant{o, toCRLF(new)}
			if crlfFile {
				// Mostly CRLF: prefer the CRLF reading, so that an LF in
				// old_string never matches inside a CRLF pair.
				variants = []variant{v, variants[0]}
			} else {
				variants = append(variants, v)
			}
		}
	}
	for _, v := range variants {
		n := countMatches(text, v.o, replaceAll)
		if n == 0 {
			continue
		}
		if n > 1 && !replaceAll {
			return nil, editDone{}, fmt.Errorf("old_string was found %d times; add surrounding lines to make it unique, or set replace_all to replace every occurrence", n)
		}
		first := strings.Index(text, v.o)
		limit := 1
		if replaceAll {
			limit = -1
		}
		out := bom + strings.Replace(text, v.o, v.n, limit)
		return []byte(out), editDone{count: n, firstAt: len(bom) + first, newLen: len(v.n)}, nil
	}
	// Quote normalisation, as a fallback.
	normText, idx := normaliseQuotes(text)
	for _, v := range variants {
		no, _ := normaliseQuotes(v.o)
		if no == v.o && normText == text {
			continue // nothing to normalise
		}
		n := countMatches(normText, no, false)
		if n == 0 {
			continue
		}
		if n > 1 {
			return nil, editDone{}, fmt.Errorf("old_string was not found as given, and after normalising curly quotes it was found %d times; give the exact text with its quotes", n)
		}
		s := strings.Index(normText, no)
		start, end := idx[s], idx[s+len(no)]
		span := text[start:end]
		rep := styleQuotes(v.n, span)
		out := bom + text[:start] + rep + text[end:]
		return []byte(out), editDone{count: 1, quotes: true, firstAt: len(bom) + start, newLen: len(rep)}, nil
	}
	return nil, editDone{}, &notFoundError{}
}

// countMatches counts the occurrences of sub in s: overlapping ones too
// unless nonOverlapping (old_string "aa" in "aaa" is ambiguous for a single
// replacement, but replace_all replaces one of them).
func countMatches(s, sub string, nonOverlapping bool) int {
	if nonOverlapping {
		return strings.Count(s, sub)
	}
	n := 0
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return n
		}
		n++
		_, size := utf8.DecodeRuneInString(s[i+j:])
		i += j + size
	}
}

// toCRLF turns every line break of s into CRLF.
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// normaliseQuotes maps curly quotes to straight ones and returns, for each
// byte offset of the result (and its end), the offset in s.
func normaliseQuotes(s string) (string, []int) {
	var b strings.Builder
	b.Grow(len(s))
	idx := make([]int, 0, len(s)+1)
	for i, r := range s {
		switch r {
		case '‘', '’', '‚', '‛':
			r = '\''
		case '“', '”', '„', '‟':
			r = '"'
		}
		if r == utf8.RuneError {
			// Keep invalid bytes byte for byte.
			_, size := utf8.DecodeRuneInString(s[i:])
			for k := 0; k < size; k++ {
				idx = append(idx, i+k)
				b.WriteByte(s[i+k])
			}
			continue
		}
		for k := 0; k < utf8.RuneLen(r); k++ {
			idx = append(idx, i)
		}
		b.WriteRune(r)
	}
	idx = append(idx, len(s))
	return b.String(), idx
}

// styleQuotes gives the straight quotes of s the curly style of like: if
// like has curly double (single) quotes, the straight double (single)
// quotes of s become opening or closing curly quotes by position (an
// apostrophe inside a word is a closing single quote).
func styleQuotes(s, like string) string {
	curlyDouble := strings.ContainsAny(like, "“”")
	curlySingle := strings.ContainsAny(like, "‘’")
	if !curlyDouble && !curlySingle {
		return s
	}
	var b strings.Builder
	var prev rune = ' '
	for _, r := range s {
		opening := prev == ' ' || prev == '\t' || prev == '\n' || prev == '\r' || strings.ContainsRune("([{<—–-", prev)
		switch {
		case r == '"' && curlyDouble:
			if opening {
				b.WriteRune('“')
			} else {
				b.WriteRune('”')
			}
		case r == '\'' && curlySingle:
			if opening {
				b.WriteRune('‘')
			} else {
				b.WriteRune('’')
			}
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

// snippetAround returns the lines of content around [at, at+n) numbered like
// Read, with up to 3 lines of context, at most 40 lines.
func snippetAround(content []byte, at, n int) string {
	at = min(max(at, 0), len(content))
	end := min(at+n, len(content))
	first := bytes.Count(content[:at], []byte{'\n'}) + 1
	last := first + bytes.Count(content[at:end], []byte{'\n'})
	from, to := max(first-3, 1), last+3
	if to-from+1 > 40 {
		to = from + 39
	}
	return numberedWindow(content, from, to)
}

// numberedWindow formats lines from..to (1-based, inclusive) of content.
func numberedWindow(content []byte, from, to int) string {
	var out strings.Builder
	num := 0
	for len(content) > 0 && num < to {
		i := bytes.IndexByte(content, '\n')
		var line []byte
		if i < 0 {
			line, content = content, nil
		} else {
			line, content = content[:i], content[i+1:]
		}
		num++
		if num >= from {
			f := formatLine(line, num == 1, false, DefaultMaxLineChars)
			writeNumbered(&out, num, f.s)
		}
	}
	return out.String()
}

// closestSnippet finds the line of content most like the first non-blank
// line of old (by character-bigram similarity) and returns it with its
// neighbours as a hint, or "" when nothing is similar enough.
func closestSnippet(content []byte, old string) string {
	var needle string
	for _, l := range strings.Split(old, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			needle = t
			break
		}
	}
	if needle == "" {
		return ""
	}
	grams := bigrams(needle)
	if len(grams) == 0 {
		return ""
	}
	index := make(map[uint64]int, len(grams))
	for _, g := range grams {
		if _, ok := index[g]; !ok {
			index[g] = len(index)
		}
	}
	seen := make([]int, len(index))
	best, bestLine := 0.0, 0
	num := 0
	rest := content
	for len(rest) > 0 {
		num++
		i := bytes.IndexByte(rest, '\n')
		var line []byte
		if i < 0 {
			line, rest = rest, nil
		} else {
			line, rest = rest[:i], rest[i+1:]
		}
		line = bytes.TrimSpace(line)
		if len(line) > 2000 {
			line = line[:2000]
		}
		common, total := 0, 0
		var prev rune = -1
		for _, r := range string(line) {
			if prev >= 0 {
				total++
				if k, ok := index[uint64(prev)<<32|uint64(r)]; ok && seen[k] != num {
					seen[k] = num
					common++
				}
			}
			prev = r
		}
		if total == 0 {
			continue
		}
		if score := 2 * float64(common) / float64(total+len(index)); score > best {
			best, bestLine = score, num
		}
	}
	if best < 0.5 {
		return ""
	}
	oldLines := strings.Count(strings.TrimSpace(old), "\n") + 1
	from, to := max(bestLine-2, 1), bestLine+min(oldLines, 10)+1
	return fmt.Sprintf(" The most similar text is at line %d (check whitespace, indentation and exact characters):\n%s", bestLine, numberedWindow(content, from, to))
}

func bigrams(s string) []uint64 {
	var out []uint64
	var prev rune = -1
	for _, r := range s {
		if prev >= 0 {
			out = append(out, uint64(prev)<<32|uint64(r))
		}
		prev = r
	}
	return out
}
