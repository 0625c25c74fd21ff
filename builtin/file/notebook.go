package file

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gantry-dev/gantry/internal/textutil"

	"github.com/gantry-dev/gantry/tool"
)

// Notebook reading.

type nbDoc struct {
	Cells         []nbCell `json:"cells"`
	NBFormat      int      `json:"nbformat"`
	NBFormatMinor int      `json:"nbformat_minor"`
}

type nbCell struct {
	CellType       string          `json:"cell_type"`
	ID             string          `json:"id"`
	Source         json.RawMessage `json:"source"`
	ExecutionCount *int            `json:"execution_count"`
	Outputs        []nbOutput      `json:"outputs"`
}

type nbOutput struct {
	OutputType string                     `json:"output_type"`
	Name       string                     `json:"name"`
	Text       json.RawMessage            `json:"text"`
	Data       map[string]json.RawMessage `json:"data"`
	EName      string                     `json:"ename"`
	EValue     string                     `json:"evalue"`
	Traceback  []string                   `json:"traceback"`
}

// multiline decodes nbformat's multiline string: a string or a list of
// strings to concatenate.
func multiline(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []string
	if json.Unmarshal(raw, &parts) == nil {
		return strings.Join(parts, "")
	}
	return ""
}

// maxOutputChars bounds the text of one notebook cell output in Read.
const maxOutputChars = 10_000

func (r *reader) readNotebook(f *os.File, info fs.FileInfo, path, key string, files tool.FileStates) (*tool.Result, error) {
	if info.Size() > r.opts.HardMaxSize {
		return failure(fmt.Errorf("notebook %s is %s, over the %s limit", path, humanSize(info.Size()), humanSize(r.opts.HardMaxSize))), nil
	}
	data, err := io.ReadAll(io.LimitReader(f, r.opts.HardMaxSize+1))
	if err != nil {
		return failure(fmt.Errorf("read %s: %w", path, err)), nil
	}
	var nb nbDoc
	if err := json.Unmarshal(data, &nb); err != nil {
		return failure(fmt.Errorf("%s is not a valid Jupyter notebook (JSON): %w", path, err)), nil
	}
	if files != nil {
		if st, ok := files.Get(key); ok && st.Offset == 1 && st.Size == info.Size() && st.ModTime.Equal(info.ModTime()) {
			msg := fmt.Sprintf("Notebook unchanged since your last read of %s. Its content is in that earlier result; refer to it instead of reading again.", path)
			return &tool.Result{Content: []tool.Content{tool.Text(msg)}, Display: []tool.Content{tool.Text(EscapeDisplay(msg))}}, nil
		}
	}
	var blocks []tool.Content
	var b strings.Builder
	imageBudget := r.opts.MaxImageBytes
	flush := func() {
		if b.Len() > 0 {
			blocks = append(blocks, tool.Text(b.String()))
			b.Reset()
		}
	}
	for i, c := range nb.Cells {
		id := c.ID
		if id == "" {
			id = "cell-" + strconv.Itoa(i)
		}
		fmt.Fprintf(&b, "<cell id=%q index=\"%d\" type=%q", id, i, c.CellType)
		if c.ExecutionCount != nil {
			fmt.Fprintf(&b, " execution_count=\"%d\"", *c.ExecutionCount)
		}
		b.WriteString(">\n")
		b.WriteString(strings.ToValidUTF8(multiline(c.Source), "\uFFFD"))
		b.WriteString("\n</cell>\n")
		for _, o := range c.Outputs {
			text, img, mime := outputContent(o)
			if text != "" {
				if head, cut := textutil.Head(text, maxOutputChars); cut {
					text = head + fmt.Sprintf("\n… [output cut: %d more characters]", utf8.RuneCountInString(text)-maxOutputChars)
				}
				fmt.Fprintf(&b, "<output cell=%q type=%q>\n%s\n</output>\n", id, o.OutputType, strings.ToValidUTF8(text, "\uFFFD"))
			}
			if img != nil {
				if int64(len(img)) <= imageBudget {
					imageBudget -= int64(len(img))
					fmt.Fprintf(&b, "<output cell=%q type=%q>[image %s, %s, follows]</output>\n", id, o.OutputType, mime, humanSize(int64(len(img))))
					flush()
					blocks = append(blocks, tool.Image(img, mime))
				} else {
					fmt.Fprintf(&b, "<output cell=%q type=%q>[image %s of %s not shown: over the image size budget]</output>\n", id, o.OutputType, mime, humanSize(int64(len(img))))
				}
			}
		}
	}
	if len(nb.Cells) == 0 {
		b.WriteString("The notebook has no cells.\n")
	}
	flush()
	if files != nil {
		files.Put(readState(key, info, hashBytes(data), 1, 0, false, r.opts.Now()))
	}
	summary := fmt.Sprintf("Read notebook %s (%d cells)", path, len(nb.Cells))
	var raw struct {
		Cells []json.RawMessage `json:"cells"`
	}
	_ = json.Unmarshal(data, &raw) // it parsed as a notebook above
	return &tool.Result{Content: blocks, Display: []tool.Content{tool.Text(EscapeDisplay(summary))},
		Structured: NotebookRead{FilePath: path, Cells: raw.Cells}}, nil
}

// outputContent returns the text of an output and, for a PNG, JPEG or GIF
// image output, its decoded bytes.
func outputContent(o nbOutput) (text string, img []byte, mime string) {
	switch o.OutputType {
	case "stream":
		return multiline(o.Text), nil, ""
	case "error":
		return o.EName + ": " + o.EValue + "\n" + strings.Join(o.Traceback, "\n"), nil, ""
	}
	for _, m := range []string{"image/png", "image/jpeg", "image/gif"} {
		if raw, ok := o.Data[m]; ok {
			enc := strings.Map(func(r rune) rune {
				if r == '\n' || r == '\r' || r == ' ' {
					return -1
				}
				return r
			}, multiline(raw))
			if b, err := base64.StdEncoding.DecodeString(enc); err == nil {
				img, mime = b, m
				break
			}
		}
	}
	if raw, ok := o.Data["text/plain"]; ok {
		text = multiline(raw)
	}
	return text, img, mime
}

// Notebook editing: the file is changed by splicing bytes, so everything
// but the edited cell stays byte-identical (indentation, key order,
// escapes, trailing newline).

type kv struct {
	key string
	val json.RawMessage
}

// nbLayout is where the cells are in a notebook's bytes.
type nbLayout struct {
	data       []byte
	arrOpen    int      // offset just after the cells array's '['
	arrClose   int      // offset of its ']'
	cells      [][2]int // [start, end) of each cell object
	topIndent  string   // whitespace unit of the top-level object ("" if compact)
	compact    bool
	minor      int
	major      int
	nbCellsRaw []json.RawMessage
}

func parseLayout(data []byte) (*nbLayout, error) {
	l := &nbLayout{data: data, arrOpen: -1}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	ws := data[dec.InputOffset():]
	ws = ws[:len(ws)-len(bytes.TrimLeft(ws, " \t\r\n"))]
	if i := bytes.LastIndexByte(ws, '\n'); i >= 0 {
		l.topIndent = string(ws[i+1:])
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		switch key {
		case "cells":
			t, err := dec.Token()
			if err != nil || t != json.Delim('[') {
				return nil, errors.New(`"cells" is not an array`)
			}
			l.arrOpen = int(dec.InputOffset())
			for dec.More() {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return nil, err
				}
				end := int(dec.InputOffset())
				l.cells = append(l.cells, [2]int{end - len(raw), end})
				l.nbCellsRaw = append(l.nbCellsRaw, raw)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			l.arrClose = int(dec.InputOffset()) - 1
		case "nbformat", "nbformat_minor":
			var n int
			if err := dec.Decode(&n); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			if key == "nbformat" {
				l.major = n
			} else {
				l.minor = n
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
	}
	if l.arrOpen < 0 {
		return nil, errors.New(`no "cells" array`)
	}
	l.compact = l.topIndent == "" && !bytes.ContainsRune(data, '\n')
	return l, nil
}

// cellIndent returns the indentation before a cell object and the unit of
// indentation inside it.
func (l *nbLayout) cellIndent() (prefix, unit string) {
	if l.compact {
		return "", ""
	}
	if len(l.cells) > 0 {
		lead := l.data[l.arrOpen:l.cells[0][0]]
		if i := bytes.LastIndexByte(lead, '\n'); i >= 0 {
			prefix = string(lead[i+1:])
		}
		cell := l.data[l.cells[0][0]:l.cells[0][1]]
		// The indentation of the cell's first key.
		if i := bytes.IndexByte(cell, '\n'); i >= 0 {
			j := i + 1
			for j < len(cell) && (cell[j] == ' ' || cell[j] == '\t') {
				j++
			}
			inner := string(cell[i+1 : j])
			if strings.HasPrefix(inner, prefix) && len(inner) > len(prefix) {
				return prefix, inner[len(prefix):]
			}
		}
		if l.topIndent != "" {
			return prefix, l.topIndent
		}
		return prefix, " "
	}
	unit = l.topIndent
	if unit == "" {
		unit = " "
	}
	return unit + unit, unit
}

func decodeKVs(raw json.RawMessage) ([]kv, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("a cell is not a JSON object")
	}
	var out []kv
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, kv{tok.(string), v})
	}
	return out, nil
}

func getKV(kvs []kv, key string) (json.RawMessage, bool) {
	for _, p := range kvs {
		if p.key == key {
			return p.val, true
		}
	}
	return nil, false
}

// setKV sets key, keeping the position of an existing key; a new key goes
// where it keeps the keys sorted if they are sorted (nbformat's writer
// sorts them), else at the end.
func setKV(kvs []kv, key string, val json.RawMessage) []kv {
	for i := range kvs {
		if kvs[i].key == key {
			kvs[i].val = val
			return kvs
		}
	}
	sorted := sort.SliceIsSorted(kvs, func(i, j int) bool { return kvs[i].key < kvs[j].key })
	if sorted {
		i := sort.Search(len(kvs), func(i int) bool { return kvs[i].key > key })
		kvs = append(kvs, kv{})
		copy(kvs[i+1:], kvs[i:])
		kvs[i] = kv{key, val}
		return kvs
	}
	return append(kvs, kv{key, val})
}

func delKV(kvs []kv, key string) []kv {
	out := kvs[:0]
	for _, p := range kvs {
		if p.key != key {
			out = append(out, p)
		}
	}
	return out
}

// marshalNoEscape marshals v without HTML escaping (nbformat writes "<" as
// it is).
func marshalNoEscape(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings and string slices always encode
	return bytes.TrimRight(b.Bytes(), "\n")
}

// sourceJSON encodes a cell source the way the notebook does: a list of
// lines (each but the last ending in "\n") or a single string.
func sourceJSON(src string, asList bool) json.RawMessage {
	if !asList {
		return marshalNoEscape(src)
	}
	lines := splitLines(src)
	if lines == nil {
		lines = []string{}
	}
	return marshalNoEscape(lines)
}

func renderCell(kvs []kv, prefix, unit string, compact bool) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range kvs {
		if i > 0 {
			b.WriteByte(',')
		}
		key := marshalNoEscape(p.key)
		if compact {
			b.Write(key)
			b.WriteByte(':')
			_ = json.Compact(&b, p.val)
			continue
		}
		b.WriteByte('\n')
		b.WriteString(prefix + unit)
		b.Write(key)
		b.WriteString(": ")
		if err := json.Indent(&b, p.val, prefix+unit, unit); err != nil {
			b.Write(p.val)
		}
	}
	if !compact && len(kvs) > 0 {
		b.WriteByte('\n')
		b.WriteString(prefix)
	}
	b.WriteByte('}')
	return b.Bytes()
}

var cellIndexForm = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^cell-(\d+)$`) }) // compiled on first use, not at init

// findCell returns the index of the cell with id, or of "cell-N".
func (l *nbLayout) findCell(id string) (int, error) {
	for i, raw := range l.nbCellsRaw {
		var c struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &c) == nil && c.ID == id {
			return i, nil
		}
	}
	if m := cellIndexForm().FindStringSubmatch(id); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n < len(l.cells) {
			return n, nil
		}
	}
	var ids []string
	for i, raw := range l.nbCellsRaw {
		if len(ids) == 10 {
			ids = append(ids, "…")
			break
		}
		var c struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &c) == nil && c.ID != "" {
			ids = append(ids, c.ID)
		} else {
			ids = append(ids, "cell-"+strconv.Itoa(i))
		}
	}
	return 0, fmt.Errorf("no cell with id %q (the notebook has %d cells: %s)", id, len(l.cells), strings.Join(ids, ", "))
}

func (l *nbLayout) usesListSource() bool {
	for _, raw := range l.nbCellsRaw {
		kvs, err := decodeKVs(raw)
		if err != nil {
			continue
		}
		if v, ok := getKV(kvs, "source"); ok {
			return bytes.HasPrefix(bytes.TrimSpace(v), []byte("["))
		}
	}
	return true
}

func (l *nbLayout) hasID(id string) bool {
	for _, raw := range l.nbCellsRaw {
		var c struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &c) == nil && c.ID == id {
			return true
		}
	}
	return false
}

// nbEdit is one NotebookEdit operation.
type nbEdit struct {
	mode     string // replace, insert, delete
	cellID   string
	cellType string
	source   string
	newID    func() string
}

// applyNotebookEdit returns the edited notebook bytes and a one-line summary.
func applyNotebookEdit(data []byte, e nbEdit) ([]byte, string, error) {
	l, err := parseLayout(data)
	if err != nil {
		return nil, "", fmt.Errorf("not a valid Jupyter notebook: %w", err)
	}
	if l.major != 4 {
		return nil, "", fmt.Errorf("only nbformat 4 notebooks can be edited (this one is nbformat %d)", l.major)
	}
	prefix, unit := l.cellIndent()
	splice := func(from, to int, insert []byte) []byte {
		out := make([]byte, 0, len(data)-(to-from)+len(insert))
		out = append(out, data[:from]...)
		out = append(out, insert...)
		return append(out, data[to:]...)
	}
	switch e.mode {
	case "", "replace":
		if e.cellID == "" {
			return nil, "", errors.New("replace needs cell_id: the id of the cell to replace (or cell-N for the N-th cell, from 0)")
		}
		i, err := l.findCell(e.cellID)
		if err != nil {
			return nil, "", err
		}
		kvs, err := decodeKVs(l.nbCellsRaw[i])
		if err != nil {
			return nil, "", err
		}
		oldType := ""
		if v, ok := getKV(kvs, "cell_type"); ok {
			_ = json.Unmarshal(v, &oldType)
		}
		typ := oldType
		if e.cellType != "" {
			typ = e.cellType
		}
		asList := true
		if v, ok := getKV(kvs, "source"); ok {
			asList = bytes.HasPrefix(bytes.TrimSpace(v), []byte("["))
		}
		kvs = setKV(kvs, "source", sourceJSON(e.source, asList))
		kvs = setKV(kvs, "cell_type", marshalNoEscape(typ))
		if typ == "code" {
			kvs = setKV(kvs, "outputs", json.RawMessage("[]"))
			kvs = setKV(kvs, "execution_count", json.RawMessage("null"))
		} else {
			kvs = delKV(kvs, "outputs")
			kvs = delKV(kvs, "execution_count")
		}
		cell := renderCell(kvs, prefix, unit, l.compact)
		return splice(l.cells[i][0], l.cells[i][1], cell), fmt.Sprintf("Replaced the source of cell %s (%s)", e.cellID, typ), nil

	case "insert":
		if e.cellType == "" {
			return nil, "", errors.New("insert needs cell_type (code or markdown)")
		}
		pos := 0
		if e.cellID != "" {
			i, err := l.findCell(e.cellID)
			if err != nil {
				return nil, "", err
			}
			pos = i + 1
		}
		kvs := []kv{{"cell_type", marshalNoEscape(e.cellType)}}
		if e.cellType == "code" {
			kvs = append(kvs, kv{"execution_count", json.RawMessage("null")})
		}
		id := ""
		if l.major > 4 || l.minor >= 5 {
			for tries := 0; tries < 100; tries++ {
				id = e.newID()
				if !l.hasID(id) {
					break
				}
			}
			kvs = append(kvs, kv{"id", marshalNoEscape(id)})
		}
		kvs = append(kvs, kv{"metadata", json.RawMessage("{}")})
		if e.cellType == "code" {
			kvs = append(kvs, kv{"outputs", json.RawMessage("[]")})
		}
		kvs = append(kvs, kv{"source", sourceJSON(e.source, l.usesListSource())})
		cell := renderCell(kvs, prefix, unit, l.compact)
		where := "at the start"
		if e.cellID != "" {
			where = "after cell " + e.cellID
		}
		summary := fmt.Sprintf("Inserted a %s cell %s", e.cellType, where)
		if id != "" {
			summary += fmt.Sprintf(" (id %s)", id)
		}
		switch {
		case len(l.cells) == 0:
			var ins []byte
			if l.compact {
				ins = cell
			} else {
				closeIndent := prefix[:len(prefix)-len(unit)]
				ins = append(append([]byte("\n"+prefix), cell...), "\n"+closeIndent...)
			}
			return splice(l.arrOpen, l.arrClose, ins), summary, nil
		case pos == 0:
			sep := data[l.arrOpen:l.cells[0][0]]
			ins := append(append(cell, ','), sep...)
			return splice(l.cells[0][0], l.cells[0][0], ins), summary, nil
		default:
			sep := data[l.arrOpen:l.cells[0][0]]
			ins := append(append([]byte{','}, sep...), cell...)
			at := l.cells[pos-1][1]
			return splice(at, at, ins), summary, nil
		}

	case "delete":
		if e.cellID == "" {
			return nil, "", errors.New("delete needs cell_id: the id of the cell to delete (or cell-N for the N-th cell, from 0)")
		}
		i, err := l.findCell(e.cellID)
		if err != nil {
			return nil, "", err
		}
		summary := fmt.Sprintf("Deleted cell %s", e.cellID)
		switch {
		case len(l.cells) == 1:
			return splice(l.arrOpen, l.arrClose, nil), summary, nil
		case i == 0:
			return splice(l.cells[0][0], l.cells[1][0], nil), summary, nil
		default:
			return splice(l.cells[i-1][1], l.cells[i][1], nil), summary, nil
		}
	}
	return nil, "", fmt.Errorf("edit_mode %q is not one of replace, insert, delete", e.mode)
}
