package durable

import (
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/builtin/agenttool"
	"github.com/gantry-dev/gantry/tool"
)

// The Agent tool's resume is refused in durable runs (they have no child
// transcripts to reopen), never silently ignored.
func TestResumeRefused(t *testing.T) {
	st := &spawnState{getenv: func(string) string { return "" }}
	err := st.request(&tool.Env{}, agenttool.Request{Definition: agenttool.Definition{Name: "general-purpose", Prompt: "p"}, Prompt: "go", Resume: "a1"}, false)
	if err == nil || !strings.Contains(err.Error(), "resume is not supported") {
		t.Fatalf("err %v", err)
	}
}
