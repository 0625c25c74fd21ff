package local

import (
	"context"
	"errors"
	"testing"

	"github.com/gantry-dev/gantry/slash"
)

// TestHandles: Run takes the built-ins without a prompt except /compact
// (the front ends show it as it goes); prompts and custom commands are
// the model's.
func TestHandles(t *testing.T) {
	want := map[string]bool{"clear": true, "context": true, "cost": true, "model": true, "permissions": true,
		"agents": true, "mcp": true, "memory": true, "compact": false, "init": false, "review": false}
	r := slash.NewRegistry(&slash.Command{Name: "deploy", Body: "Deploy.", Source: slash.SourceProject})
	for _, c := range r.List() {
		w, ok := want[c.Name]
		if !ok && c.Builtin() {
			t.Errorf("built-in %s is not in the table", c.Name)
		}
		if got := Handles(c); got != w {
			t.Errorf("Handles(%s) = %v, want %v", c.Name, got, w)
		}
	}
	if Handles(nil) {
		t.Error("Handles(nil)")
	}
	if _, err := Run(context.Background(), Request{Command: r.Lookup("deploy")}); !errors.Is(err, ErrNotHere) {
		t.Errorf("Run(/deploy) error = %v, want ErrNotHere", err)
	}
	if _, err := Run(context.Background(), Request{Command: r.Lookup("cost")}); err == nil {
		t.Error("Run without an agent did not fail")
	}
}
