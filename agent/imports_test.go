package agent

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The loop knows no tool: what it needs of them (the Agent tool's
// contract, team members, reminders, background jobs, worktrees) reaches
// it through package subagent, tool.Reminder and the workspace. forbiddenImports are
// the module's packages (and the trees under them) package agent must not
// import; allowedForNow are the exceptions still open, each with why (see
// docs/rough-edges.md). An import in neither list that matches a forbidden
// prefix fails the test.
var (
	forbiddenImports = []string{"builtin", "cron", "store", "serve", "serveapi", "runqueue", "trigger", "mcpserve", "tui"}
	allowedForNow    = map[string]string{} // none left
)

const module = "github.com/gantry-dev/gantry/"

// TestAgentImportsNoToolPackage parses the package's own (non-test) files
// and fails on a forbidden import.
func TestAgentImportsNoToolPackage(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(path, module)
			if !ok {
				continue
			}
			if _, ok := allowedForNow[rel]; ok {
				used[rel] = true
				continue
			}
			if forbidden(rel) {
				t.Errorf("%s imports %s: the agent loop may not import tool or server packages; reach it through the workspace or an interface", name, path)
			}
		}
	}
	// An exception nobody needs any more is removed, so it cannot hide a
	// new import.
	for rel, why := range allowedForNow {
		if !used[rel] {
			t.Errorf("allowedForNow lists %s (%s) but no file imports it: remove the exception", rel, why)
		}
	}
}

func forbidden(rel string) bool {
	return slices.ContainsFunc(forbiddenImports, func(p string) bool {
		return rel == p || strings.HasPrefix(rel, p+"/")
	})
}

// TestForbidden checks the matcher the import test relies on.
func TestForbidden(t *testing.T) {
	for rel, want := range map[string]bool{
		"builtin/team": true, "builtin": true, "store": true, "cron": true, "serve": true, "serveapi": true,
		"runqueue": true, "builtinx": false, "tool": false, "workspace": false, "subagent": false, "session": false,
		"storex": false, "llm/texttools": false,
	} {
		if got := forbidden(rel); got != want {
			t.Errorf("forbidden(%q) = %v, want %v", rel, got, want)
		}
	}
}
