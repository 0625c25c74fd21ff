package permission

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/tool"
)

// BenchmarkAskChannel: a Bash call that asks, answered "allow once"
// through an interaction channel — the engine's decision, the suggestion
// of rules, the request, the answer and ResolveAsk. What Gantry adds to
// the time a person takes.
func BenchmarkAskChannel(b *testing.B) {
	w := newWorld(b)
	e := w.engine(b, nil, nil, nil)
	ch := interaction.Funcs{Permission: func(context.Context, *interaction.PermissionRequest) (*interaction.PermissionAnswer, error) {
		return &interaction.PermissionAnswer{Choice: interaction.AllowOnce}, nil
	}}
	canUse := AskChannel(ch, e, interaction.Who{})
	in, _ := json.Marshal(bash("npm install left-pad && npm test"))
	req := &Request{Tool: named("Bash"), Input: in, Env: &tool.Env{WorkDir: w.work}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		d, err := e.Decide(ctx, req)
		if err != nil || d.Behavior != tool.Ask {
			b.Fatalf("%+v %v", d, err)
		}
		if d = ResolveAsk(ctx, req, d, canUse); d.Behavior != tool.Allow {
			b.Fatalf("%+v", d)
		}
	}
}
