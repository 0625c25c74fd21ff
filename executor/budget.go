package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/gantry-dev/gantry/internal/textutil"
	"github.com/gantry-dev/gantry/tool"
)

// applyBudget enforces the spec's result budget on r's model channel. A
// result whose text is over the limit is written in full to a file in dir
// named after the tool-use id, and its text blocks are replaced by one
// preview block (at the place of the first text block) telling the model
// the path, the full size and how to read more. Non-text blocks (images) and
// the display channel are kept as they are. It returns the new result (r is
// not modified) and the file's path ("" when nothing was saved).
func applyBudget(r *tool.Result, limit, previewChars int, dir, id string) (*tool.Result, string, error) {
	if r == nil || limit < 0 {
		return r, "", nil
	}
	n := tool.TextLen(r.Content)
	if n <= limit {
		return r, "", nil
	}
	full := tool.JoinText(r.Content)
	if previewChars > limit {
		previewChars = limit
	}
	preview := previewOf(full, previewChars)
	lines := strings.Count(full, "\n") + 1

	var note string
	path, err := saveResult(dir, id, full)
	if err != nil {
		note = fmt.Sprintf("\n\n[Output truncated: %d characters (%d lines) in total, showing the first %d. The full output could not be saved (%v).]",
			n, lines, utf8.RuneCountInString(preview), err)
	} else {
		note = fmt.Sprintf("\n\n[Output too large: %d characters (%d lines) in total, showing the first %d. The full output is saved in %s. "+
			"To see more, use the Read tool with file_path %q and offset/limit (line numbers), or search it with Grep.]",
			n, lines, utf8.RuneCountInString(preview), path, path)
	}
	out := *r
	out.Content = make([]tool.Content, 0, len(r.Content))
	placed := false
	for _, c := range r.Content {
		if c.Type == tool.TypeText || (c.Type == tool.TypeResource && c.Text != "") {
			if !placed {
				out.Content = append(out.Content, tool.Text(preview+note))
				placed = true
			}
			continue
		}
		out.Content = append(out.Content, c)
	}
	if !placed {
		// Text outside text blocks (a link's title…): still bounded.
		out.Content = append(out.Content, tool.Text(preview+note))
	}
	return &out, path, err
}

// previewOf returns about the first n characters of s, cut at the last line
// boundary in that span when there is one in its second half.
func previewOf(s string, n int) string {
	p, cut := textutil.Head(s, n)
	if !cut {
		return s
	}
	if i := strings.LastIndexByte(p, '\n'); i >= len(p)/2 {
		p = p[:i]
	}
	return p
}

// resultFileName derives a safe file name from a tool-use id.
func resultFileName(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 100 {
			break
		}
	}
	if b.Len() == 0 {
		b.WriteString("result")
	}
	return b.String() + ".txt"
}

// saveResult writes text atomically (temp file + rename) to dir/<id>.txt.
func saveResult(dir, id, text string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create tool-results directory: %w", err)
	}
	path := filepath.Join(dir, resultFileName(id))
	f, err := os.CreateTemp(dir, ".tmp-result-*")
	if err != nil {
		return "", fmt.Errorf("save result: %w", err)
	}
	_, werr := f.WriteString(text)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("save result: %w", firstErr(werr, cerr))
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("save result: %w", err)
	}
	return path, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// resultsDir picks the directory for oversized results.
func (e *Executor) resultsDir(env *tool.Env) string {
	if env != nil && env.ToolResultsDir != "" {
		return env.ToolResultsDir
	}
	sid := "session"
	if env != nil && env.SessionID != "" {
		sid = strings.TrimSuffix(resultFileName(env.SessionID), ".txt")
	}
	return filepath.Join(os.TempDir(), "gantry-tool-results", sid)
}
