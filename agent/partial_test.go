package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

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
		a := f.agent(t, func(o *Options) { o.Pool = toolset.Options{Tools: []tool.Tool{note}} })
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
