package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// noteTool runs one instance per call; instances watch the input stream.
type noteTool struct {
	spec tool.Spec

	mu        sync.Mutex
	instances []*noteCall
}

func (n *noteTool) Spec() *tool.Spec { return &n.spec }

func (n *noteTool) Call(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error) {
	return nil, fmt.Errorf("the shared instance must not run")
}

func (n *noteTool) NewCall(id string) tool.Tool {
	c := &noteCall{id: id}
	n.mu.Lock()
	n.instances = append(n.instances, c)
	n.mu.Unlock()
	return c
}

type noteCall struct {
	id                      string
	partials, calls, freed  int
	ranEarly, invalidObject bool
}

func (c *noteCall) Spec() *tool.Spec { return nil }

func (c *noteCall) ObservePartial(ctx context.Context, env *tool.Env, partial json.RawMessage) {
	var m map[string]any
	if json.Unmarshal(partial, &m) != nil {
		c.invalidObject = true
	}
	if c.calls > 0 {
		c.ranEarly = true
	}
	c.partials++
}

func (c *noteCall) Call(ctx context.Context, env *tool.Env, input json.RawMessage) (*tool.Result, error) {
	c.calls++
	return tool.TextResult(fmt.Sprintf("noted after %d partials", c.partials)), nil
}

func (c *noteCall) Release() { c.freed++ }

// TestPartialInputStreamedByteByByte: the model's stream carries the
// tool input one byte per delta; the tool sees partial objects while it
// streams, its per-call instance runs the complete call once and is
// released.
func TestPartialInputStreamedByteByByte(t *testing.T) {
	bothProviders(t, []llmtest.Option{llmtest.WithChunkSize(1)}, func(t *testing.T, f *fixture) {
		note := &noteTool{spec: tool.Spec{Name: "Note", Description: "Takes a note.", Traits: tool.ReadOnlyTraits,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}}
		full := `{"text":"a note with \"quotes\" and [brackets]"}`
		f.srv.Script(
			llmtest.ToolReply(llmtest.ToolCall{ID: "toolu_n", Name: "Note", Input: full}),
			llmtest.Reply{Content: []llm.Block{llm.Text("done")}},
		)
		a := f.agent(t, func(o *testOpts) { o.Pool = toolset.Options{Tools: []tool.Tool{note}} })
		_, res, err := collect(t, context.Background(), a, "take a note")
		if err != nil || res.IsError {
			t.Fatalf("%v %+v", err, res)
		}
		note.mu.Lock()
		defer note.mu.Unlock()
		if len(note.instances) != 1 {
			t.Fatalf("%d instances", len(note.instances))
		}
		c := note.instances[0]
		if c.id != "toolu_n" || c.partials < 1 || c.calls != 1 || c.freed != 1 || c.ranEarly || c.invalidObject {
			t.Fatalf("instance %+v", c)
		}
		tr := f.srv.Requests()[1].ToolResults()
		if len(tr) != 1 || tool.JoinText(tr[0].Content) != fmt.Sprintf("noted after %d partials", c.partials) {
			t.Fatalf("tool results %+v", tr)
		}
	})
}

// TestSessionDescriptionFailureNoticed: a tool whose session-time
// description fails or misses its deadline is left out of the requests,
// and the run says so.
func TestSessionDescriptionFailureNoticed(t *testing.T) {
	f := newFixture(t)
	f.srv.Script(llmtest.Reply{Content: []llm.Block{llm.Text("hi")}})
	slow := tool.Must(tool.NewText("Slow", "Describes itself slowly.", func(context.Context, *tool.Env, echoIn) (string, error) { return "", nil },
		tool.SessionFunc(func(ctx context.Context, env *tool.Env) (tool.SessionSpec, error) {
			<-ctx.Done()
			return tool.SessionSpec{}, ctx.Err()
		})))
	good := tool.Must(tool.NewText("Good", "Static.", func(context.Context, *tool.Env, echoIn) (string, error) { return "", nil },
		tool.SessionFunc(func(ctx context.Context, env *tool.Env) (tool.SessionSpec, error) {
			return tool.SessionSpec{Prompt: "Works in " + env.WorkDir + "."}, nil
		})))
	a := f.agent(t, func(o *testOpts) {
		o.Pool = toolset.Options{Tools: []tool.Tool{slow, good}, SessionTimeout: 20 * time.Millisecond}
	})
	evs, _, err := collect(t, context.Background(), a, "hello")
	if err != nil {
		t.Fatal(err)
	}
	var notice string
	for _, ev := range evs {
		if n, ok := ev.(*NoticeEvent); ok {
			notice += n.Text
		}
	}
	if !strings.Contains(notice, `tool "Slow": session-time description: no answer within 20ms`) {
		t.Fatalf("notices %q", notice)
	}
	req := f.srv.LastRequest()
	if names := strings.Join(req.ToolNames(), ","); names != "Good" {
		t.Fatalf("tools sent %s", names)
	}
	if !strings.Contains(string(mustJSON(req.Tools)), "Works in "+f.dir+".") {
		t.Fatalf("the session prompt is not sent: %s", mustJSON(req.Tools))
	}
}
