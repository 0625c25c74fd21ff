package agent

import (
	"context"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
)

// TestClearAndStats: Stats adds up the model calls; Clear goes on under a
// new session id and transcript with an empty conversation, keeps the
// usage (a budget holds for the process) and drops the context size; the
// old transcript stays resumable.
func TestClearAndStats(t *testing.T) {
	f := newFixture(t)
	reply := func(s string) llmtest.Reply {
		r := llmtest.TextReply(s)
		r.Usage = llm.Usage{InputTokens: 100, OutputTokens: 20}
		return r
	}
	f.srv.Script(reply("one"), reply("two"))
	a := f.agent(t, nil)
	ctx := context.Background()
	if s := a.Stats(); s.Turns != 0 || s.ContextTokens != 0 || s.ContextWindow != DefaultContextWindow {
		t.Fatalf("Stats before a run = %+v", s)
	}
	if _, err := a.Prompt(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	s := a.Stats()
	if s.Turns != 1 || s.Usage.InputTokens != 100 || s.Usage.OutputTokens != 20 || s.ContextTokens != 120 {
		t.Fatalf("Stats after a run = %+v", s)
	}
	old := a.SessionID()
	if err := a.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if a.SessionID() == old || len(a.Messages()) != 0 || a.Env().SessionID != a.SessionID() {
		t.Fatalf("after Clear: id %q (was %q), env id %q, %d messages", a.SessionID(), old, a.Env().SessionID, len(a.Messages()))
	}
	if s := a.Stats(); s.Turns != 1 || s.ContextTokens != 0 {
		t.Errorf("Stats after Clear = %+v", s)
	}
	if _, err := a.Prompt(ctx, "second"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.srv.LastRequest().Messages); n != 1 {
		t.Errorf("the first prompt after Clear went with %d messages", n)
	}
	tr, err := f.store.Open(f.dir, old)
	if err != nil {
		t.Fatalf("the old session is not resumable: %v", err)
	}
	tr.Close()
}
