package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm/llmtest"
)

func TestCompactOnDemand(t *testing.T) {
	f := newFixture(t)
	f.srv.Script(llmtest.TextReply("one"), llmtest.TextReply("two"), llmtest.TextReply("SUMMARY: two prompts"), llmtest.TextReply("after"))
	a := f.agent(t, func(o *testOpts) { o.KeepMessages = 1 })
	// Too short: nothing to do, no request.
	if ev, err := a.Compact(context.Background(), ""); ev != nil || err != nil {
		t.Fatalf("empty conversation: %+v, %v", ev, err)
	}
	for _, p := range []string{"first", "second"} {
		if _, err := a.Prompt(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := a.Compact(context.Background(), "keep the prompt words")
	if err != nil || ev == nil {
		t.Fatalf("Compact: %+v, %v", ev, err)
	}
	if ev.Before != 4 || ev.After >= ev.Before {
		t.Errorf("compact event %+v", ev)
	}
	last := f.srv.LastRequest()
	got := last.Messages[len(last.Messages)-1]
	if b := got.Content[len(got.Content)-1]; !strings.Contains(b.Text, "Also follow these instructions for the summary: keep the prompt words") {
		t.Errorf("the instructions are not in the summary request: %+v", got)
	}
	if msgs := a.Messages(); !strings.Contains(msgs[0].Text(), "SUMMARY: two prompts") {
		t.Errorf("history after Compact starts with %q", msgs[0].Text())
	}
	if res, err := a.Prompt(context.Background(), "third"); err != nil || res.Text != "after" {
		t.Errorf("the conversation does not go on: %+v, %v", res, err)
	}
}
