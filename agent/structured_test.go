package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/llm/texttools"
	"github.com/gantry-dev/gantry/subagent"
	"github.com/gantry-dev/gantry/tool"
)

const personSchema = `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}},"required":["name","age"],"additionalProperties":false}`

func outCall(id, input string) llmtest.Reply {
	return llmtest.ToolReply(llmtest.ToolCall{ID: id, Name: StructuredOutputName, Input: input})
}

// TestStructuredOutput: the run ends at the first valid final answer; an
// invalid one gets the validation error and the model retries; a turn
// ended in text gets a reminder; never valid ends with the retries error
// subtype — through both providers.
func TestStructuredOutput(t *testing.T) {
	cases := []struct {
		name     string
		script   []llmtest.Reply
		retries  int
		subtype  string
		answer   string
		requests int
		// inSecond is what the second request must contain (the error or
		// reminder the model was given).
		inSecond string
	}{
		{name: "valid first time", script: []llmtest.Reply{outCall("s1", `{"name":"Ada","age":36}`)},
			subtype: SubtypeSuccess, answer: `{"name":"Ada","age":36}`, requests: 1},
		{name: "coerced", script: []llmtest.Reply{outCall("s1", `{"name":"Ada","age":"36"}`)},
			subtype: SubtypeSuccess, answer: `{"name":"Ada","age":36}`, requests: 1},
		{name: "invalid then valid", script: []llmtest.Reply{
			outCall("s1", `{"name":"Ada"}`),
			outCall("s2", `{"name":"Ada","age":36}`),
		}, subtype: SubtypeSuccess, answer: `{"name":"Ada","age":36}`, requests: 2, inSecond: "age"},
		{name: "text ending reminded", script: []llmtest.Reply{
			llmtest.TextReply("Ada is 36."),
			outCall("s2", `{"name":"Ada","age":36}`),
		}, subtype: SubtypeSuccess, answer: `{"name":"Ada","age":36}`, requests: 2, inSecond: "without calling the StructuredOutput tool"},
		{name: "tools then answer", script: []llmtest.Reply{
			llmtest.ToolReply(llmtest.ToolCall{ID: "e1", Name: "Echo", Input: `{"text":"x"}`}),
			outCall("s2", `{"name":"Ada","age":36}`),
		}, subtype: SubtypeSuccess, answer: `{"name":"Ada","age":36}`, requests: 2, inSecond: "echo: x"},
		{name: "never valid", retries: 3, script: []llmtest.Reply{
			outCall("s1", `{"name":"Ada","age":-1}`),
			llmtest.TextReply("I cannot."),
			outCall("s3", `{"name":"Ada","age":"old"}`),
		}, subtype: SubtypeMaxStructuredRetries, requests: 3, inSecond: "age"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bothProviders(t, []llmtest.Option{llmtest.WithStrictMessages()}, func(t *testing.T, f *fixture) {
				f.srv.Script(c.script...)
				a := f.agent(t, func(o *testOpts) { o.OutputSchema = json.RawMessage(personSchema); o.OutputRetries = c.retries })
				_, res, err := collect(t, context.Background(), a, "who is Ada?")
				if err != nil {
					t.Fatal(err)
				}
				if res.Subtype != c.subtype || res.IsError != (c.subtype != SubtypeSuccess) {
					t.Fatalf("result %+v", res)
				}
				if c.answer == "" && res.Structured != nil {
					t.Fatalf("structured %s on a failed run", res.Structured)
				}
				if c.answer != "" && !jsonEqual(res.Structured, c.answer) {
					t.Fatalf("structured %s, want %s", res.Structured, c.answer)
				}
				reqs := f.srv.Requests()
				if len(reqs) != c.requests {
					t.Fatalf("%d requests, want %d", len(reqs), c.requests)
				}
				first := reqs[0]
				if n := first.ToolNames(); n[len(n)-1] != StructuredOutputName {
					t.Fatalf("tools %v: no %s", n, StructuredOutputName)
				}
				var system strings.Builder
				for _, s := range first.System {
					system.WriteString(s.Text)
				}
				if !strings.Contains(system.String(), "call the StructuredOutput tool exactly once") {
					t.Fatalf("system prompt does not name the tool:\n%s", system.String())
				}
				if c.inSecond != "" && !strings.Contains(messagesText(reqs[1].Messages), c.inSecond) {
					t.Fatalf("second request lacks %q:\n%s", c.inSecond, messagesText(reqs[1].Messages))
				}
				// The next run of the agent has no schema left over when
				// the options have none: PromptAs's schema is per run.
			})
		})
	}
}

// jsonEqual compares JSON values (key order aside).
func jsonEqual(got json.RawMessage, want string) bool {
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

type answerPerson struct {
	Name string   `json:"name" jsonschema:"the answerPerson's name"`
	Age  int      `json:"age"`
	Tags []string `json:"tags,omitempty"`
}

// TestPromptAs: the schema inferred from a Go type, the answer decoded into
// it; the agent's other runs have no final-answer tool; a failed run gives
// ErrNoStructuredOutput. Also in the text tool protocol.
func TestPromptAs(t *testing.T) {
	for _, proto := range []texttools.Protocol{texttools.Native, texttools.Text} {
		t.Run(string(proto), func(t *testing.T) {
			bothProviders(t, nil, func(t *testing.T, f *fixture) {
				answer := llmtest.ToolReply(llmtest.ToolCall{ID: "s1", Name: StructuredOutputName, Input: `{"name":"Ada","age":36,"tags":["math"]}`})
				if proto == texttools.Text {
					answer = llmtest.TextReply("<StructuredOutput>\n<name>Ada</name>\n<age>36</age>\n<tags>[\"math\"]</tags>\n</StructuredOutput>\n")
				}
				f.srv.Script(answer, llmtest.TextReply("plain"))
				a := f.agent(t, func(o *testOpts) { o.ToolProtocol = proto })
				p, res, err := PromptAs[answerPerson](context.Background(), a, "who is Ada?")
				if err != nil {
					t.Fatalf("%v (%+v)", err, res)
				}
				if p.Name != "Ada" || p.Age != 36 || len(p.Tags) != 1 || p.Tags[0] != "math" {
					t.Fatalf("decoded %+v", p)
				}
				reqs := f.srv.Requests()
				var schema json.RawMessage
				for _, tl := range reqs[0].Tools {
					if tl.Name == StructuredOutputName {
						schema = tl.InputSchema
					}
				}
				if proto == texttools.Native && !strings.Contains(string(schema), `"required":["name","age"]`) {
					t.Fatalf("inferred schema %s", schema)
				}
				// A plain run afterwards: no final-answer tool.
				_, res, err = collect(t, context.Background(), a, "hello")
				if err != nil || res.Subtype != SubtypeSuccess || res.Structured != nil {
					t.Fatalf("%+v %v", res, err)
				}
				if last := f.srv.Requests()[1]; proto == texttools.Native && strings.Contains(strings.Join(last.ToolNames(), ","), StructuredOutputName) {
					t.Fatalf("plain run offered %s", StructuredOutputName)
				}
			})
		})
	}
	t.Run("no answer", func(t *testing.T) {
		f := newFixture(t)
		f.srv.Script(llmtest.TextReply("no"), llmtest.TextReply("no"))
		a := f.agent(t, func(o *testOpts) { o.OutputRetries = 2 })
		_, res, err := PromptAs[answerPerson](context.Background(), a, "x")
		if !errors.Is(err, ErrNoStructuredOutput) || res == nil || res.Subtype != SubtypeMaxStructuredRetries {
			t.Fatalf("%v %+v", err, res)
		}
	})
	t.Run("not a struct", func(t *testing.T) {
		f := newFixture(t)
		a := f.agent(t, nil)
		if _, _, err := PromptAs[[]int](context.Background(), a, "x"); err == nil {
			t.Fatal("a slice type was accepted")
		}
	})
}

// TestStructuredOutputWrapped: a schema whose type is not an object is
// wrapped in an object for the tool and unwrapped in the answer.
func TestStructuredOutputWrapped(t *testing.T) {
	f := newFixture(t)
	f.srv.Script(outCall("s1", `{"output":["a","b"]}`))
	a := f.agent(t, func(o *testOpts) {
		o.OutputSchema = json.RawMessage(`{"type":"array","items":{"type":"string"}}`)
	})
	_, res, err := collect(t, context.Background(), a, "list")
	if err != nil || res.Subtype != SubtypeSuccess || string(res.Structured) != `["a","b"]` {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestOutputSchemaRejected: a schema that is not JSON fails New.
func TestOutputSchemaRejected(t *testing.T) {
	f := newFixture(t)
	for _, s := range []string{`{`, `{"type":"object","properties":{"a":{"type":"nope"}}}`} {
		_, err := New(context.Background(), withWorkspace(t, testOpts{Options: Options{Provider: f.provider(), OutputSchema: json.RawMessage(s), NoEnvFacts: true, NoMemoryFiles: true}, WorkDir: f.dir}, nil))
		if err == nil {
			t.Fatalf("schema %s accepted", s)
		}
	}
}

// TestSubagentOutputSchema: an agent type with an output schema ends with
// StructuredOutput and the parent receives the JSON as the tool result;
// the parent's own run has no final-answer tool.
func TestSubagentOutputSchema(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		var parentTools []string
		var got string
		sc := convs{
			"extract": {
				func(r llmtest.Request) llmtest.Reply {
					parentTools = r.ToolNames()
					return llmtest.ToolReply(agentCall("c1", map[string]any{"description": "extract", "prompt": "find the answerPerson", "subagent_type": "extractor"}))
				},
				func(r llmtest.Request) llmtest.Reply { got = lastResults(r)[0]; return llmtest.TextReply("done") },
			},
			"find the answerPerson": {
				reply(outCall("s1", `{"name":"Ada"}`)), // invalid: no age
				reply(outCall("s2", `{"name":"Ada","age":36}`)),
			},
		}
		f.srv = llmtest.NewServer(t, sc.responder(t))
		if f.openai {
			f.srv = llmtest.NewServer(t, sc.responder(t), llmtest.WithIndexZero())
		}
		a := f.agent(t, func(o *testOpts) {
			o.Agents = []subagent.Definition{{Name: "extractor", Description: "Extracts a answerPerson.", Prompt: "You extract.", OutputSchema: json.RawMessage(personSchema)}}
		})
		_, res, err := collect(t, context.Background(), a, "extract")
		if err != nil || res.Subtype != SubtypeSuccess || res.Structured != nil {
			t.Fatalf("%+v %v", res, err)
		}
		if !jsonEqual(json.RawMessage(got), `{"name":"Ada","age":36}`) {
			t.Fatalf("parent received %q", got)
		}
		for _, n := range parentTools {
			if n == StructuredOutputName {
				t.Fatalf("parent offered %s: %v", n, parentTools)
			}
		}
	})
}

// BenchmarkStructuredOutputCall is the cost the final-answer tool adds to
// a call: "answer" runs a StructuredOutput call through the executor
// (validation against the cached compiled schema, coercion, the call);
// "baseline" the same pipeline with a tool that takes no input. The
// difference is what validating the answer costs.
func BenchmarkStructuredOutputCall(b *testing.B) {
	out, err := outputTool(json.RawMessage(personSchema))
	if err != nil {
		b.Fatal(err)
	}
	noop := tool.Must(tool.NewNoInput("Noop", "Does nothing.", func(context.Context, *tool.Env) (*tool.Result, error) {
		return tool.TextResult("ok"), nil
	}, tool.ReadOnly()))
	res, err := executor.NewMapResolver(out, noop)
	if err != nil {
		b.Fatal(err)
	}
	ex := executor.New(res, executor.Options{})
	sess := executor.NewSharedEnv(&tool.Env{WorkDir: b.TempDir()})
	for _, c := range []struct {
		name string
		call executor.Call
	}{
		{"answer", executor.Call{ID: "s1", Name: StructuredOutputName, Input: json.RawMessage(`{"name":"Ada","age":36}`)}},
		{"baseline", executor.Call{ID: "n1", Name: "Noop", Input: json.RawMessage(`{}`)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			calls := []executor.Call{c.call}
			b.ReportAllocs()
			for b.Loop() {
				batch, err := ex.Run(ctx, sess, calls)
				if err != nil || batch.Outcomes[0].Result.IsError {
					b.Fatal(err, batch.Outcomes[0].Result)
				}
			}
		})
	}
}
