package file

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
)

// The structured results of the file tools ([tool.Result.Structured]).
// Their JSON is the Agent SDK's declared output of the same tool
// (FileReadOutput, FileWriteOutput, FileEditOutput, NotebookEditOutput in
// its sdk-tools.d.ts), field for field, so a program written for that SDK
// reads a Gantry result (tool_use_result) unchanged.

// TextRead is the structured result of a Read of a text file. Its JSON is
// {"type":"text","file":{filePath, content, numLines, startLine,
// totalLines}}: content is the lines read without their line numbers.
type TextRead struct {
	// FilePath is the file's absolute path.
	FilePath string
	// StartLine is the number of the first line read (from 1); NumLines
	// how many were read; TotalLines the file's lines (when the file was
	// not read to its end and is too large to count, the last line read).
	StartLine, NumLines, TotalLines int

	numbered string // the lines as the model got them (cat -n form)
}

// Content returns the lines read, without the line numbers the model got.
// A line cut for length keeps the marker the model saw.
func (t TextRead) Content() string {
	if t.numbered == "" {
		return ""
	}
	var b strings.Builder
	b.Grow(len(t.numbered))
	s := t.numbered
	first := true
	for s != "" {
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		if !first {
			b.WriteByte('\n')
		}
		first = false
		if _, text, ok := strings.Cut(line, "\t"); ok {
			b.WriteString(text)
		} else {
			b.WriteString(line)
		}
	}
	return b.String()
}

// MarshalJSON writes the SDK's FileReadOutput (type "text").
func (t TextRead) MarshalJSON() ([]byte, error) {
	type file struct {
		FilePath   string `json:"filePath"`
		Content    string `json:"content"`
		NumLines   int    `json:"numLines"`
		StartLine  int    `json:"startLine"`
		TotalLines int    `json:"totalLines"`
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		File file   `json:"file"`
	}{"text", file{t.FilePath, t.Content(), t.NumLines, t.StartLine, t.TotalLines}})
}

// ImageRead is the structured result of a Read of an image. Its JSON is
// {"type":"image","file":{base64, type, originalSize, dimensions}}.
type ImageRead struct {
	Data     []byte
	MIMEType string
	// Width and Height are the image's pixels (0 when not decoded).
	Width, Height int
}

// MarshalJSON writes the SDK's FileReadOutput (type "image").
func (r ImageRead) MarshalJSON() ([]byte, error) {
	type dims struct {
		OriginalWidth  int `json:"originalWidth"`
		OriginalHeight int `json:"originalHeight"`
		DisplayWidth   int `json:"displayWidth"`
		DisplayHeight  int `json:"displayHeight"`
	}
	type file struct {
		Base64       string `json:"base64"`
		Type         string `json:"type"`
		OriginalSize int    `json:"originalSize"`
		Dimensions   *dims  `json:"dimensions,omitempty"`
	}
	f := file{Base64: base64.StdEncoding.EncodeToString(r.Data), Type: r.MIMEType, OriginalSize: len(r.Data)}
	if r.Width > 0 && r.Height > 0 {
		f.Dimensions = &dims{r.Width, r.Height, r.Width, r.Height}
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		File file   `json:"file"`
	}{"image", f})
}

// NotebookRead is the structured result of a Read of a Jupyter notebook:
// {"type":"notebook","file":{filePath, cells}}, the cells as the notebook
// holds them.
type NotebookRead struct {
	FilePath string
	Cells    []json.RawMessage
}

// MarshalJSON writes the SDK's FileReadOutput (type "notebook").
func (r NotebookRead) MarshalJSON() ([]byte, error) {
	cells := r.Cells
	if cells == nil {
		cells = []json.RawMessage{}
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		File struct {
			FilePath string            `json:"filePath"`
			Cells    []json.RawMessage `json:"cells"`
		} `json:"file"`
	}{Type: "notebook", File: struct {
		FilePath string            `json:"filePath"`
		Cells    []json.RawMessage `json:"cells"`
	}{r.FilePath, cells}})
}

// Hunk is one hunk of a change, as the SDK's structuredPatch holds it:
// Lines are the unified diff's lines with their prefix (' ', '-', '+', or
// '\' for "\ No newline at end of file") and without a line break.
type Hunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// WriteOutput is the structured result of a Write (the SDK's
// FileWriteOutput).
type WriteOutput struct {
	// Type is "create" for a new file, "update" for a replaced one.
	Type     string `json:"type"`
	FilePath string `json:"filePath"`
	// Content is the content written as the model gave it.
	Content         string `json:"content"`
	StructuredPatch []Hunk `json:"structuredPatch"`
	// OriginalFile is the previous content (nil for a new file).
	OriginalFile *string `json:"originalFile"`
}

// EditOutput is the structured result of an Edit (the SDK's
// FileEditOutput).
type EditOutput struct {
	FilePath  string `json:"filePath"`
	OldString string `json:"oldString"`
	NewString string `json:"newString"`
	// OriginalFile is the content before the edit (nil for a file the
	// edit created).
	OriginalFile    *string `json:"originalFile"`
	StructuredPatch []Hunk  `json:"structuredPatch"`
	// UserModified is always false: nobody edits a proposed change in
	// Gantry's permission prompts.
	UserModified bool `json:"userModified"`
	ReplaceAll   bool `json:"replaceAll"`
}

// NotebookEditOutput is the structured result of a NotebookEdit (the
// SDK's NotebookEditOutput).
type NotebookEditOutput struct {
	NewSource    string `json:"new_source"`
	CellID       string `json:"cell_id,omitempty"`
	CellType     string `json:"cell_type"`
	Language     string `json:"language"`
	EditMode     string `json:"edit_mode"`
	NotebookPath string `json:"notebook_path"`
	OriginalFile string `json:"original_file"`
	UpdatedFile  string `json:"updated_file"`
}

// ParseHunks returns the hunks of a unified diff as [UnifiedDiff] writes
// it (headers and a truncation note are skipped). A malformed hunk header
// ends the parse; what was parsed before it is returned. It never returns
// nil.
func ParseHunks(diff string) []Hunk {
	hunks := []Hunk{}
	var cur *Hunk
	for diff != "" {
		var line string
		line, diff, _ = strings.Cut(diff, "\n")
		if strings.HasPrefix(line, "@@ ") {
			h, ok := parseHunkHeader(line)
			if !ok {
				return hunks
			}
			hunks = append(hunks, h)
			cur = &hunks[len(hunks)-1]
			continue
		}
		if cur == nil || line == "" {
			continue
		}
		switch line[0] {
		case ' ', '-', '+', '\\':
			cur.Lines = append(cur.Lines, line)
		default:
			cur = nil // "… diff truncated"
		}
	}
	return hunks
}

// parseHunkHeader parses "@@ -a,b +c,d @@" (",b" and ",d" default to 1).
func parseHunkHeader(line string) (Hunk, bool) {
	rest, ok := strings.CutPrefix(line, "@@ -")
	if !ok {
		return Hunk{}, false
	}
	oldPart, rest, ok := strings.Cut(rest, " +")
	if !ok {
		return Hunk{}, false
	}
	newPart, _, ok := strings.Cut(rest, " @@")
	if !ok {
		return Hunk{}, false
	}
	h := Hunk{Lines: []string{}}
	var err1, err2 error
	h.OldStart, h.OldLines, err1 = parseRange(oldPart)
	h.NewStart, h.NewLines, err2 = parseRange(newPart)
	return h, err1 == nil && err2 == nil
}

func parseRange(s string) (start, n int, err error) {
	a, b, found := strings.Cut(s, ",")
	if start, err = strconv.Atoi(a); err != nil || start < 0 {
		return 0, 0, strconv.ErrSyntax
	}
	if !found {
		return start, 1, nil
	}
	if n, err = strconv.Atoi(b); err != nil || n < 0 {
		return 0, 0, strconv.ErrSyntax
	}
	return start, n, nil
}

// ptrTo returns a pointer to a copy of s.
func ptrTo(s string) *string { return &s }
