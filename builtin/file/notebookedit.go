package file

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/tool"
)

// NotebookEditInput is the input of the NotebookEdit tool.
type NotebookEditInput struct {
	NotebookPath string `json:"notebook_path" jsonschema:"The Jupyter notebook (.ipynb) to change: an absolute path, or a path relative to the working directory"`
	CellID       string `json:"cell_id,omitempty" jsonschema:"The id of the cell to replace or delete, or after which to insert (insert without it puts the cell first). cell-N names the N-th cell, counting from 0"`
	NewSource    string `json:"new_source" jsonschema:"The new source of the cell (ignored by delete)"`
	CellType     string `json:"cell_type,omitempty" enum:"code,markdown" jsonschema:"The cell's type; required by insert, optional for replace (changes the type)"`
	EditMode     string `json:"edit_mode,omitempty" enum:"replace,insert,delete" jsonschema:"replace (the default), insert or delete"`
}

const notebookEditDescription = `Changes one cell of a Jupyter notebook (.ipynb): replace its source, insert a new cell, or delete it.

- Read the notebook in this session first; the edit fails if it changed since.
- cell_id is the cell's id as Read shows it (cell-N for the N-th cell, from 0, in notebooks without ids).
- A replaced code cell loses its outputs and execution count. insert needs cell_type and puts the cell after cell_id (first without it).
- The rest of the notebook is kept byte for byte.`

type notebookEditor struct{ c changer }

// NewNotebookEdit returns the NotebookEdit tool: not read-only, not
// concurrency-safe, destructive. It needs env.Files.
func NewNotebookEdit(opts Options) tool.Tool {
	e := &notebookEditor{changer{opts.withDefaults()}}
	return tool.Must(tool.New("NotebookEdit", notebookEditDescription, e.call,
		tool.AccessFunc(func(in NotebookEditInput) (tool.Access, error) {
			return tool.Access{Writes: []string{in.NotebookPath}}, nil
		}),
		tool.BackfillFunc(func(env *tool.Env, in *NotebookEditInput) { backfillPath(env, &in.NotebookPath) }),
		tool.ValidateFunc(func(_ context.Context, env *tool.Env, in NotebookEditInput) error {
			return e.check(env, in)
		}),
		tool.DescribeFunc(func(in NotebookEditInput) string { return "Edit notebook " + describePath(in.NotebookPath) }),
	))
}

func (e *notebookEditor) check(env *tool.Env, in NotebookEditInput) error {
	path, err := resolvePath(envWorkDir(env), in.NotebookPath)
	if err != nil {
		return err
	}
	if !strings.EqualFold(filepath.Ext(path), ".ipynb") {
		return fmt.Errorf("%s is not a Jupyter notebook (.ipynb); use Edit for other files", path)
	}
	switch in.EditMode {
	case "", "replace", "delete":
		if in.CellID == "" {
			return fmt.Errorf("edit_mode %s needs cell_id", orDefault(in.EditMode, "replace"))
		}
	case "insert":
		if in.CellType == "" {
			return errors.New("edit_mode insert needs cell_type (code or markdown)")
		}
	default:
		return fmt.Errorf("edit_mode %q is not one of replace, insert, delete", in.EditMode)
	}
	switch in.CellType {
	case "", "code", "markdown":
	default:
		return fmt.Errorf("cell_type %q is not one of code, markdown", in.CellType)
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (e *notebookEditor) call(ctx context.Context, env *tool.Env, in NotebookEditInput) (*tool.Result, error) {
	if err := e.check(env, in); err != nil {
		return failure(err), nil
	}
	t, err := e.c.load(ctx, env, in.NotebookPath)
	if err != nil {
		return failure(err), nil
	}
	defer t.release()
	if !t.exists {
		return failure(fmt.Errorf("notebook does not exist: %s", t.path)), nil
	}
	if err := e.c.fresh(env, t, false); err != nil {
		return failure(err), nil
	}
	out, summary, err := applyNotebookEdit(t.content, nbEdit{
		mode: in.EditMode, cellID: in.CellID, cellType: in.CellType, source: in.NewSource, newID: e.c.opts.NewCellID,
	})
	if err != nil {
		return failure(fmt.Errorf("%s: %w", t.path, err)), nil
	}
	if err := e.c.commit(env, t, out); err != nil {
		return failure(err), nil
	}
	diff, _, _ := renderDiff(t.path, string(t.content), string(out))
	r := changed(fmt.Sprintf("%s in %s.", summary, t.path), diff)
	r.Structured = NotebookEditOutput{NewSource: in.NewSource, CellID: in.CellID, CellType: cmpOr(in.CellType, "code"),
		Language: notebookLanguage(out), EditMode: cmpOr(in.EditMode, "replace"), NotebookPath: t.path,
		OriginalFile: string(t.content), UpdatedFile: string(out)}
	return r, nil
}

// notebookLanguage is the notebook's language (its language_info or
// kernelspec metadata), "python" when it names none.
func notebookLanguage(data []byte) string {
	var nb struct {
		Metadata struct {
			LanguageInfo struct {
				Name string `json:"name"`
			} `json:"language_info"`
			KernelSpec struct {
				Language string `json:"language"`
			} `json:"kernelspec"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(data, &nb) // a notebook that does not say is python
	return cmpOr(nb.Metadata.LanguageInfo.Name, nb.Metadata.KernelSpec.Language, "python")
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
