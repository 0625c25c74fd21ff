package file

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/tool"
)

// WriteInput is the input of the Write tool.
type WriteInput struct {
	FilePath string `json:"file_path" jsonschema:"The file to write: an absolute path, or a path relative to the working directory"`
	Content  string `json:"content" jsonschema:"The full new content of the file"`
}

const writeDescription = `Writes a file to the local filesystem, replacing it if it exists.

- Overwriting an existing file requires that you have read the whole file in this session with Read and that it has not changed since; otherwise the call fails.
- Parent directories are created. The write is atomic and keeps the file's permissions; an existing file's CRLF line endings and UTF-8 BOM are kept.
- Prefer Edit to change part of an existing file: it sends only the change.`

type writer struct{ c changer }

// NewWrite returns the Write tool: not read-only, not concurrency-safe,
// destructive. It needs env.Files.
func NewWrite(opts Options) tool.Tool {
	w := &writer{changer{opts.withDefaults()}}
	return tool.Must(tool.New("Write", writeDescription, observed(func(in WriteInput) string { return in.FilePath }, w.call),
		tool.AccessFunc(func(in WriteInput) (tool.Access, error) { return tool.Access{Writes: []string{in.FilePath}}, nil }),
		tool.BackfillFunc(func(env *tool.Env, in *WriteInput) { backfillPath(env, &in.FilePath) }),
		tool.ValidateFunc(func(_ context.Context, env *tool.Env, in WriteInput) error {
			_, err := resolvePath(envWorkDir(env), in.FilePath)
			return err
		}),
		tool.DescribeFunc(func(in WriteInput) string { return "Write " + describePath(in.FilePath) }),
	))
}

func (w *writer) call(ctx context.Context, env *tool.Env, in WriteInput) (*tool.Result, error) {
	t, err := w.c.load(ctx, env, in.FilePath)
	if err != nil {
		return failure(err), nil
	}
	defer t.release()
	data := []byte(in.Content)
	if t.exists {
		if err := w.c.fresh(env, t, true); err != nil {
			return failure(err), nil
		}
		data = keepStyle(t.content, in.Content)
	}
	if err := w.c.commit(env, t, data); err != nil {
		return failure(err), nil
	}
	lines := strings.Count(in.Content, "\n")
	if in.Content != "" && !strings.HasSuffix(in.Content, "\n") {
		lines++
	}
	diff, added, removed := renderDiff(t.path, string(t.content), string(data))
	var msg string
	if t.exists {
		msg = fmt.Sprintf("Updated %s (%d lines, %d bytes; +%d -%d lines).", t.path, lines, len(data), added, removed)
	} else {
		msg = fmt.Sprintf("Created %s (%d lines, %d bytes).", t.path, lines, len(data))
	}
	r := changed(msg, diff)
	out := WriteOutput{Type: "create", FilePath: t.path, Content: in.Content, StructuredPatch: ParseHunks(diff)}
	if t.exists {
		out.Type, out.OriginalFile = "update", ptrTo(string(t.content))
	}
	r.Structured = out
	return r, nil
}

// keepStyle applies an existing file's line endings and BOM to new content
// that has neither: a CRLF file stays CRLF, a file with a UTF-8 BOM keeps it.
func keepStyle(old []byte, content string) []byte {
	if lineEnding(old) == "\r\n" && !strings.Contains(content, "\r\n") {
		content = strings.ReplaceAll(content, "\n", "\r\n")
	}
	if bytes.HasPrefix(old, []byte(utf8BOM)) && !strings.HasPrefix(content, utf8BOM) {
		content = utf8BOM + content
	}
	return []byte(content)
}
