package agent_test

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/workspace"
)

// answerModel is a stand-in model for the example: it answers every
// request with one StructuredOutput call.
func answerModel(input string) llm.Provider {
	return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
		return func(yield func(llm.Event, error) bool) {
			for _, ev := range []llm.Event{
				{Type: llm.EventMessageStart, ID: "msg_1", Model: "example"},
				{Type: llm.EventToolUseStart, ID: "call_1", Name: agent.StructuredOutputName},
				{Type: llm.EventToolUseEnd, ID: "call_1", Name: agent.StructuredOutputName, Input: []byte(input)},
				{Type: llm.EventMessageEnd, StopReason: llm.StopToolUse},
			} {
				if !yield(ev, nil) {
					return
				}
			}
		}
	})
}

// A typed final answer: the schema is inferred from Release, the model's
// StructuredOutput call is validated against it (the string "3" is coerced
// to the integer 3), and the answer is decoded into the struct.
func ExamplePromptAs() {
	type Release struct {
		Version  string   `json:"version" jsonschema:"the semantic version, without a v prefix"`
		Breaking int      `json:"breaking" jsonschema:"how many breaking changes"`
		Notes    []string `json:"notes"`
	}
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	// A workspace without settings files or tools (the final-answer tool
	// is the run's own).
	ws, err := workspace.Open(context.Background(), workspace.Options{Dir: dir, NoSettings: true, Pool: &toolset.Options{Registry: toolset.NewRegistry()}})
	if err != nil {
		fmt.Println(err)
		return
	}
	ag, err := agent.New(context.Background(), agent.Options{
		Provider:  answerModel(`{"version":"2.1.0","breaking":"3","notes":["faster"]}`),
		Workspace: ws, Closers: []io.Closer{ws}, NoEnvFacts: true, NoMemoryFiles: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ag.Close()
	rel, res, err := agent.PromptAs[Release](context.Background(), ag, "prepare the release notes")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Subtype, rel.Version, rel.Breaking, rel.Notes)
	// Output: success 2.1.0 3 [faster]
}
