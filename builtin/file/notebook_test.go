package file

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"
)

// nbFixture is a notebook as Jupyter writes it (indent 1, sorted keys,
// nbformat 4.5 with cell ids).
const nbFixture = `{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "m0",
   "metadata": {},
   "source": [
    "# Title <b>\n",
    "text"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "c1",
   "metadata": {"tags": ["x"]},
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "hello\n"
     ]
    },
    {
     "data": {
      "image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      "text/plain": [
       "<Figure>"
      ]
     },
     "metadata": {},
     "output_type": "display_data"
    }
   ],
   "source": [
    "print('hello')"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {"name": "python3"}
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
`

func TestReadNotebook(t *testing.T) {
	dir, env := testEnv(t)
	p := writeFile(t, filepath.Join(dir, "n.ipynb"), nbFixture)
	r := tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p})
	got := mustOK(t, r)
	for _, w := range []string{`<cell id="m0" index="0" type="markdown">`, "# Title <b>\ntext", `<cell id="c1" index="1" type="code" execution_count="3">`,
		"print('hello')", "hello\n", "<Figure>", "image/png"} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in\n%s", w, got)
		}
	}
	images := 0
	for _, c := range r.Content {
		if c.Type == "image" {
			images++
		}
	}
	if images != 1 {
		t.Errorf("%d image blocks", images)
	}
	mustErr(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: writeFile(t, filepath.Join(dir, "bad.ipynb"), "{nope")}), "not a valid Jupyter notebook")
}

func TestNotebookEdit(t *testing.T) {
	ids := 0
	opts := Options{NewCellID: func() string { ids++; return []string{"m0", "new1", "new2"}[ids-1] }}
	tests := []struct {
		name    string
		in      NotebookEditInput
		check   func(t *testing.T, out string, cells []map[string]any)
		wantErr []string
	}{
		{name: "replace code", in: NotebookEditInput{CellID: "c1", NewSource: "x = 1\ny = 2"}, check: func(t *testing.T, out string, cells []map[string]any) {
			c := cells[1]
			if c["execution_count"] != nil || len(c["outputs"].([]any)) != 0 {
				t.Errorf("outputs kept: %v", c)
			}
			if src := c["source"].([]any); len(src) != 2 || src[0] != "x = 1\n" || src[1] != "y = 2" {
				t.Errorf("source %v", src)
			}
			// Untouched cell and the rest are byte-identical.
			if !strings.HasPrefix(out, nbFixture[:strings.Index(nbFixture, `  {
   "cell_type": "code"`)]) {
				t.Errorf("prefix changed:\n%s", out)
			}
			if !strings.HasSuffix(out, nbFixture[strings.Index(nbFixture, "\n ],\n \"metadata\""):]) {
				t.Errorf("suffix changed:\n%s", out)
			}
			if !strings.Contains(out, "   \"metadata\": {\n    \"tags\": [\n     \"x\"\n    ]\n   },") {
				t.Errorf("metadata not re-indented in the notebook's style:\n%s", out)
			}
		}},
		{name: "replace by index form, change type", in: NotebookEditInput{CellID: "cell-1", NewSource: "# md", CellType: "markdown"}, check: func(t *testing.T, out string, cells []map[string]any) {
			c := cells[1]
			if c["cell_type"] != "markdown" {
				t.Errorf("type %v", c["cell_type"])
			}
			if _, ok := c["outputs"]; ok {
				t.Errorf("markdown cell has outputs")
			}
		}},
		{name: "insert after", in: NotebookEditInput{CellID: "m0", EditMode: "insert", CellType: "code", NewSource: "z = 3"}, check: func(t *testing.T, out string, cells []map[string]any) {
			if len(cells) != 3 || cells[1]["id"] != "new1" || cells[1]["cell_type"] != "code" {
				t.Fatalf("cells %v", cells)
			}
			if !strings.Contains(out, "  {\n   \"cell_type\": \"code\",\n   \"execution_count\": null,\n   \"id\": \"new1\",\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [\n    \"z = 3\"\n   ]\n  },\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": 3") {
				t.Errorf("inserted cell not in the notebook's style:\n%s", out)
			}
		}},
		{name: "insert first", in: NotebookEditInput{EditMode: "insert", CellType: "markdown", NewSource: "intro"}, check: func(t *testing.T, out string, cells []map[string]any) {
			if len(cells) != 3 || cells[0]["source"].([]any)[0] != "intro" {
				t.Fatalf("cells %v", cells)
			}
		}},
		{name: "delete", in: NotebookEditInput{CellID: "m0", EditMode: "delete"}, check: func(t *testing.T, out string, cells []map[string]any) {
			if len(cells) != 1 || cells[0]["id"] != "c1" {
				t.Fatalf("cells %v", cells)
			}
		}},
		{name: "unknown cell", in: NotebookEditInput{CellID: "zz", NewSource: "x"}, wantErr: []string{`no cell with id "zz"`, "m0, c1"}},
		{name: "insert needs type", in: NotebookEditInput{EditMode: "insert", NewSource: "x"}, wantErr: []string{"needs cell_type"}},
		{name: "replace needs id", in: NotebookEditInput{NewSource: "x"}, wantErr: []string{"needs cell_id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, env := testEnv(t)
			p := writeFile(t, filepath.Join(dir, "n.ipynb"), nbFixture)
			mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p}))
			in := tt.in
			in.NotebookPath = p
			ids = 0
			r := tooltest.Call(t, NewNotebookEdit(opts), env, in)
			if tt.wantErr != nil {
				mustErr(t, r, tt.wantErr...)
				return
			}
			mustOK(t, r)
			out := readFile(t, p)
			var nb struct {
				Cells []map[string]any `json:"cells"`
			}
			if err := json.Unmarshal([]byte(out), &nb); err != nil {
				t.Fatalf("invalid JSON after edit: %v\n%s", err, out)
			}
			tt.check(t, out, nb.Cells)
		})
	}
}

func TestNotebookEditShapes(t *testing.T) {
	// Compact, no ids (minor 4), string sources, and an empty notebook.
	compact := `{"cells":[{"cell_type":"code","execution_count":1,"metadata":{},"outputs":[],"source":"a=1"}],"metadata":{},"nbformat":4,"nbformat_minor":4}`
	out, _, err := applyNotebookEdit([]byte(compact), nbEdit{mode: "insert", cellID: "cell-0", cellType: "markdown", source: "hi", newID: func() string { return "id" }})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cells":[{"cell_type":"code","execution_count":1,"metadata":{},"outputs":[],"source":"a=1"},{"cell_type":"markdown","metadata":{},"source":"hi"}],"metadata":{},"nbformat":4,"nbformat_minor":4}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	empty := "{\n \"cells\": [],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n"
	out, _, err = applyNotebookEdit([]byte(empty), nbEdit{mode: "insert", cellType: "markdown", source: "a\nb", newID: func() string { return "abc" }})
	if err != nil {
		t.Fatal(err)
	}
	want = "{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"abc\",\n   \"metadata\": {},\n   \"source\": [\n    \"a\\n\",\n    \"b\"\n   ]\n  }\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n"
	if string(out) != want {
		t.Fatalf("got  %q\nwant %q", out, want)
	}
	// Deleting the only cell gives back an empty array.
	back, _, err := applyNotebookEdit(out, nbEdit{mode: "delete", cellID: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != strings.Replace(empty, "[]", "[]", 1) {
		t.Fatalf("%q", back)
	}
	if _, _, err := applyNotebookEdit([]byte(`{"cells":[],"nbformat":3}`), nbEdit{mode: "insert", cellType: "code"}); err == nil || !strings.Contains(err.Error(), "nbformat 4") {
		t.Fatalf("err = %v", err)
	}
}

func FuzzNotebookEdit(f *testing.F) {
	f.Add(nbFixture, "c1", "replace", "code", "x")
	f.Add(`{"cells":[],"nbformat":4}`, "", "insert", "markdown", "y")
	f.Add(`{"cells":[{"id":"a"}],"nbformat":4,"nbformat_minor":5}`, "a", "delete", "", "")
	f.Fuzz(func(t *testing.T, doc, id, mode, typ, src string) {
		out, _, err := applyNotebookEdit([]byte(doc), nbEdit{mode: mode, cellID: id, cellType: typ, source: src, newID: func() string { return "fz" }})
		if err != nil {
			return
		}
		if json.Valid([]byte(doc)) && !json.Valid(out) {
			t.Fatalf("valid notebook became invalid JSON:\n%s\n→\n%s", doc, out)
		}
	})
}
