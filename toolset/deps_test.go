package toolset

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestNoProviderSDK keeps the package provider-neutral: neither it nor
// anything it imports may depend on a model provider's SDK; each model
// adapter owns its tool format.
func TestNoProviderSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 2 || !slices.Contains(deps, "github.com/gantry-dev/gantry/toolset") {
		t.Fatalf("go list -deps listed nothing usable:\n%s", out)
	}
	for _, d := range deps {
		for _, sdk := range []string{"github.com/anthropics/anthropic-sdk-go", "github.com/openai/openai-go"} {
			if d == sdk || strings.HasPrefix(d, sdk+"/") {
				t.Errorf("toolset depends on %s (provider formats belong in llm/anthropic and llm/openai)", d)
			}
		}
	}
}
