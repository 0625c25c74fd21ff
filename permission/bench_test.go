package permission

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

// BenchmarkDecideCompoundBash: one decision for a compound Bash command with
// 20 rules in force.
func BenchmarkDecideCompoundBash(b *testing.B) {
	w := newWorld(b)
	allow := []string{"Bash(go build *)", "Bash(go test *)", "Bash(go vet *)", "Bash(npm run test:*)", "Bash(npm ci)",
		"Bash(make *)", "Bash(git diff *)", "Bash(git log *)", "Read(~/notes/**)", "Edit(./src/**)", "WebFetch(domain:go.dev)", "mcp__gh"}
	deny := []string{"Bash(rm -rf *)", "Bash(curl *)", "Bash(wget *)", "Read(./.env)", "WebFetch"}
	askRules := []string{"Bash(git push *)", "Bash(npm publish *)", "Edit(./go.mod)"}
	e := w.engine(b, allow, deny, askRules)
	in, _ := json.Marshal(bash("cd src && go build ./... && go vet ./... && go test -race ./... 2>&1 | head -50; make lint > /dev/null"))
	req := &Request{Tool: named("Bash"), Input: in, Env: &tool.Env{WorkDir: w.work}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		d, err := e.Decide(ctx, req)
		if err != nil || d.Behavior != tool.Allow {
			b.Fatalf("%+v %v", d, err)
		}
	}
}
