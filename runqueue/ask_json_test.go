package runqueue

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/interaction"
)

// TestAskCarriesWholeCommand: a pending ask as serve's API shows it
// (GET /v1/runs/{id}) carries the call's exact input — the whole command
// — with the model's description beside it, and reads back the same.
func TestAskCarriesWholeCommand(t *testing.T) {
	cmd := "sh greet.sh | tee out.txt && " + strings.Repeat("echo more; ", 100)
	in, _ := json.Marshal(map[string]string{"command": cmd})
	a := Ask{ID: "a1", Kind: interaction.KindPermission,
		Request: &interaction.PermissionRequest{ToolName: "Bash", Input: in, Description: "Run greet.sh"}}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Request struct {
			Input struct{ Command string } `json:"input"`
		} `json:"request"`
	}
	if err := json.Unmarshal(b, &shown); err != nil || shown.Request.Input.Command != cmd {
		t.Fatalf("the ask's JSON %s lacks the whole command (%v)", b, err)
	}
	var back Ask
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if r, ok := back.Request.(*interaction.PermissionRequest); !ok || !strings.Contains(string(r.Input), "tee out.txt") {
		t.Errorf("read back %#v", back.Request)
	}
}
