package permission

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

func TestSuggest(t *testing.T) {
	w := newWorld(t)
	cases := []struct {
		tool  string
		input any
		want  []string
	}{
		{"Bash", bash("git status && npm run build -- --prod"), []string{"Bash(npm run *)"}},
		{"Bash", bash("make && make install"), []string{"Bash(make)", "Bash(make install *)"}},
		{"Bash", bash("sudo apt-get update"), []string{"Bash(sudo apt-get update)"}},
		{"Bash", bash("CI=1 npm test"), []string{"Bash(CI=1 npm test)"}},
		{"Bash", bash("go test -run 'X*' ./..."), []string{`Bash(go test *)`}},
		{"Bash", bash("echo $(id)"), nil},
		{"Bash", bash("rm -rf /"), nil},
		{"Bash", bash("ls &&"), nil},
		{"Edit", file("src/a.go"), []string{"Edit(./src/**)"}},
		{"Read", file("/etc/hosts"), []string{"Read(//etc/**)"}},
		{"WebFetch", map[string]any{"url": "https://Docs.Go.dev/x"}, []string{"WebFetch(domain:docs.go.dev)"}},
		{"mcp__gh__create_issue", map[string]any{}, []string{"mcp__gh__create_issue"}},
	}
	e := w.engine(t, nil, nil, nil)
	for _, c := range cases {
		in, _ := json.Marshal(c.input)
		req := &Request{Tool: named(c.tool), Input: in, Env: &tool.Env{WorkDir: w.work}}
		got := e.Suggest(req)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s %s: %q, want %q", c.tool, in, got, c.want)
			continue
		}
		if len(got) == 0 {
			continue
		}
		// The suggestion, applied, allows the call.
		e2 := w.engine(t, nil, nil, nil)
		u, ok := e2.SuggestUpdate(req, ToSession)
		must(t, e2.Apply(u, nil))
		if d, err := e2.Decide(context.Background(), req); err != nil || !ok || d.Behavior != tool.Allow {
			t.Errorf("%s %s: after applying %q: %+v %v", c.tool, in, got, d, err)
		}
	}
}
