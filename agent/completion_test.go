package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/llm/texttools"
	"github.com/gantry-dev/gantry/transcript"
)

// messagesText joins the text of every block of msgs.
func messagesText(msgs []llmtest.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		for _, c := range m.Content {
			b.WriteString(c.Text)
			b.WriteString(string(c.Input))
			for _, n := range c.Content {
				b.WriteString(n.AsText())
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// TestCompletionTools: attempt_completion ends the run with its result, an
// empty one is an error the model sees (the run goes on), and new_task
// hands the task to a new session whose first user message is the
// handed-over context, linked to the old one both ways — in both tool
// protocols and through both providers.
func TestCompletionTools(t *testing.T) {
	for _, proto := range []texttools.Protocol{texttools.Native, texttools.Text} {
		t.Run(string(proto), func(t *testing.T) {
			bothProviders(t, []llmtest.Option{llmtest.WithStrictMessages()}, func(t *testing.T, f *fixture) {
				call := func(id, name, input string) llmtest.Reply {
					if proto == texttools.Text {
						return llmtest.TextReply(textCall(t, name, input))
					}
					return llmtest.ToolReply(llmtest.ToolCall{ID: id, Name: name, Input: input})
				}
				// Run 1: an empty result is refused, then the task completes.
				f.srv.Script(
					call("c1", "attempt_completion", `{"result":"  "}`),
					call("c2", "attempt_completion", `{"result":"all tests pass","command":"go test ./..."}`),
				)
				var hmu sync.Mutex
				var hooked []string
				a := f.agent(t, func(o *testOpts) {
					o.ToolProtocol, o.CompletionTools = proto, true
					o.Hooks = hook.RunnerFunc(func(_ context.Context, in *hook.Input) (*hook.Output, error) {
						if in.Event == hook.SessionStart || in.Event == hook.SessionEnd {
							hmu.Lock()
							hooked = append(hooked, fmt.Sprintf("%s %s%s %s", in.Event, in.Source, in.Reason, in.SessionID))
							hmu.Unlock()
						}
						return nil, nil
					})
				})
				_, res, err := collect(t, context.Background(), a, "fix it")
				if err != nil || res == nil || res.Subtype != SubtypeSuccess || res.IsError {
					t.Fatalf("res %+v err %v", res, err)
				}
				if want := "all tests pass\n\nTo see the result: go test ./..."; res.Text != want {
					t.Fatalf("result text %q, want %q", res.Text, want)
				}
				reqs := f.srv.Requests()
				if len(reqs) != 2 {
					t.Fatalf("%d requests, want 2 (the run ends at attempt_completion)", len(reqs))
				}
				if got := messagesText(reqs[1].Messages); !strings.Contains(got, "result is empty") {
					t.Fatalf("the empty result was not refused:\n%s", got)
				}

				// Run 2: new_task hands the task to a new session whose
				// first user message is the context; the old one ends.
				oldID := a.SessionID()
				f.srv.Script(
					call("e1", "Echo", `{"text":"old-context-marker"}`),
					call("n1", "new_task", `{"context":"goal: ship v2; done: parser; left: docs"}`),
					llmtest.TextReply("finished in the new context"),
				)
				_, res, err = collect(t, context.Background(), a, "go on")
				if err != nil || res == nil || res.Subtype != SubtypeSuccess || res.Text != "finished in the new context" {
					t.Fatalf("res %+v err %v", res, err)
				}
				reqs = f.srv.Requests()[2:]
				if len(reqs) != 3 {
					t.Fatalf("%d requests, want 3", len(reqs))
				}
				var last []llmtest.Message // the conversation (OpenAI records the system prompt as a message)
				for _, m := range reqs[2].Messages {
					if m.Role != "system" {
						last = append(last, m)
					}
				}
				got := messagesText(last)
				if len(last) != 1 || !strings.Contains(got, "goal: ship v2; done: parser; left: docs") {
					t.Fatalf("new context is not the hand-off alone (%d messages):\n%s", len(last), got)
				}
				if strings.Contains(got, "old-context-marker") || strings.Contains(got, "fix it") {
					t.Fatalf("the old conversation leaked into the new context:\n%s", got)
				}
				newID := a.SessionID()
				if newID == oldID || res.SessionID != newID {
					t.Fatalf("session ids: old %s, agent %s, result %s", oldID, newID, res.SessionID)
				}
				hmu.Lock()
				gotHooks := strings.Join(hooked, "\n")
				hmu.Unlock()
				if !strings.Contains(gotHooks, "SessionEnd new_task "+oldID+"\nSessionStart new_task "+newID) {
					t.Fatalf("hooks around the hand-off:\n%s", gotHooks)
				}
				oldRecs, err := transcript.ReadFile(f.store.Path(f.dir, oldID))
				if err != nil {
					t.Fatal(err)
				}
				lastOld := oldRecs[len(oldRecs)-1]
				if lastOld.Subtype != "handoff" || !strings.Contains(string(lastOld.Data), newID) {
					t.Fatalf("old transcript does not end with the hand-off: %+v", lastOld)
				}
				newRecs, err := transcript.ReadFile(f.store.Path(f.dir, newID))
				if err != nil {
					t.Fatal(err)
				}
				if len(newRecs) < 3 || newRecs[0].Subtype != "handoff_from" || !strings.Contains(string(newRecs[0].Data), oldID) ||
					newRecs[1].Type != transcript.TypeUser || !strings.Contains(string(newRecs[1].Message), "left: docs") {
					t.Fatalf("new transcript does not start from the hand-off: %+v", newRecs)
				}
				for _, r := range newRecs {
					if strings.Contains(string(r.Message), "old-context-marker") {
						t.Fatalf("the old conversation is in the new transcript: %+v", r)
					}
				}
			})
		})
	}
}

// flatPairs returns the name/value pairs of a flat JSON object of strings,
// in the order written.
func flatPairs(t *testing.T, input string) [][2]string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(input))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		v, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]string{k.(string), v.(string)})
	}
	return out
}

// textCall writes a call in the text protocol's tag syntax from a flat JSON
// object of string values.
func textCall(t *testing.T, name, input string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("<" + name + ">\n")
	for _, kv := range flatPairs(t, input) {
		b.WriteString("<" + kv[0] + ">" + kv[1] + "</" + kv[0] + ">\n")
	}
	b.WriteString("</" + name + ">\n")
	return b.String()
}
