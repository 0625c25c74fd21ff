package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/gantry-dev/gantry/tool"
)

type grepIn struct {
	Pattern string `json:"pattern" jsonschema:"The regular expression"`
	Path    string `json:"path,omitempty" jsonschema:"Where to search"`
}

// A structured description is rendered once, when the tool is built, into
// the description and prompt every format sends. Each example input is
// validated against the schema then: a bad example is a build error.
func ExampleWithDoc() {
	grep, err := tool.NewText("Grep", "", func(ctx context.Context, env *tool.Env, in grepIn) (string, error) {
		return "", nil
	}, tool.ReadOnly(), tool.WithDoc(tool.Doc{
		DisplayName: "Search file contents",
		Short:       "Searches file contents with a regular expression.",
		Long:        "Returns the matching lines with file names and line numbers.",
		UsageNotes:  []string{"Prefer it to grep in Bash."},
		Important:   []string{"Results are capped at 250 lines."},
		Examples:    []tool.Example{{Description: "Find TODOs under src", Input: json.RawMessage(`{"pattern": "TODO", "path": "src"}`)}},
	}))
	if err != nil {
		panic(err)
	}
	s := grep.Spec()
	fmt.Println(s.DisplayName())
	fmt.Println(s.Description)
	fmt.Println("--")
	fmt.Println(s.Prompt)

	_, err = tool.NewText("Grep", "Searches.", func(ctx context.Context, env *tool.Env, in grepIn) (string, error) {
		return "", nil
	}, tool.WithDoc(tool.Doc{Examples: []tool.Example{{Description: "no pattern", Input: json.RawMessage(`{"path":"src"}`)}}}))
	fmt.Println("bad example rejected:", err != nil)
	// Output:
	// Search file contents
	// Searches file contents with a regular expression.
	// --
	// Returns the matching lines with file names and line numbers.
	//
	// Usage notes:
	// - Prefer it to grep in Bash.
	//
	// Important:
	// - Results are capped at 250 lines.
	//
	// Examples:
	// - Find TODOs under src
	//   {"pattern":"TODO","path":"src"}
	// bad example rejected: true
}

type openIn struct {
	FilePath string `json:"file_path"`
}

// A backfill adds derived fields to what hooks, permission checks and UIs
// see; the tool still receives the model's input.
func ExampleBackfillFunc() {
	open := tool.Must(tool.NewText("Open", "Opens a file.", func(ctx context.Context, env *tool.Env, in openIn) (string, error) {
		return "opened " + in.FilePath, nil // the model's (relative) path
	}, tool.BackfillFunc(func(env *tool.Env, in *openIn) {
		if in.FilePath != "" && !filepath.IsAbs(in.FilePath) {
			in.FilePath = filepath.Join(env.WorkDir, in.FilePath)
		}
	})))
	env := &tool.Env{WorkDir: "/src/app"}
	input := json.RawMessage(`{"file_path":"main.go"}`)
	observable := tool.Observable(open, env, input)
	fmt.Println(string(observable))
	fmt.Println(string(tool.Observable(open, env, observable))) // idempotent
	// Output:
	// {"file_path":"/src/app/main.go"}
	// {"file_path":"/src/app/main.go"}
}
