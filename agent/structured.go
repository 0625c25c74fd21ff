package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/texttools"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// Structured output: a run whose Options.OutputSchema (or PromptAs's type)
// is set ends when the model calls the final-answer tool with an input the
// schema accepts.
const (
	// StructuredOutputName is the final-answer tool's name (the reference
	// agent's, so that models trained on it call it unprompted).
	StructuredOutputName = "StructuredOutput"
	// DefaultOutputRetries is how many failed attempts at the final answer
	// a run allows (see [Options.OutputRetries]).
	DefaultOutputRetries = 5
	// SubtypeMaxStructuredRetries ends a run whose model failed to give a
	// valid final answer OutputRetries times.
	SubtypeMaxStructuredRetries = "error_max_structured_output_retries"
	// wrapProperty holds a non-object answer: a tool's input is always an
	// object, so a schema of another type is the type of this property.
	wrapProperty = "output"
)

// OutputStrategy is how a run with an output schema gets its answer.
type OutputStrategy string

// Output strategies.
const (
	// OutputTool (the default, also ""): the final-answer tool
	// StructuredOutput, validated by the executor like any tool input.
	OutputTool OutputStrategy = "tool"
	// OutputNative: the provider's structured-output mode (Anthropic's
	// output format, OpenAI's strict json_schema response format)
	// constrains the model's text; the text of the turn that ends the
	// run is the answer, checked by the same validator. It needs the
	// native tool protocol and a schema the provider accepts in strict
	// mode (for OpenAI: every property required, additionalProperties
	// false). A non-object schema is sent wrapped as {"output": …} and
	// the answer unwrapped.
	OutputNative OutputStrategy = "native"
)

// ErrNoStructuredOutput is wrapped by [PromptAs]'s error when the run ended
// without a valid final answer (the result's Subtype says why).
var ErrNoStructuredOutput = errors.New("agent: the run ended without structured output")

// outputInstructions is added to the system prompt of a run with an output
// schema.
const outputInstructions = `Your final answer is structured data. When the task is done, call the ` + StructuredOutputName +
	` tool exactly once with the answer as its input, matching its schema; that call ends your work, and nothing you write ` +
	`after it is read. Do not write the answer as text: only the tool call counts. If the tool reports a validation error, ` +
	`call it again with a corrected input.`

// nativeInstructions is added to the system prompt of a run whose
// provider constrains the final text.
const nativeInstructions = `Your final answer is structured data: when the task is done, reply with only the JSON the response ` +
	`format requires, nothing before or after it.`

// outputReminder is sent when a turn of a structured run ends in text.
const outputReminder = `You ended your turn without calling the ` + StructuredOutputName + ` tool. The task requires its ` +
	`final answer as structured data: call ` + StructuredOutputName + ` now with an input that matches its schema.`

// answer is the Structured value of a successful final-answer call.
type answer struct{ value json.RawMessage }

// outputTool builds the final-answer tool for schema, which must be a JSON
// Schema; a schema whose top-level type is not "object" is wrapped in an
// object with one required property, unwrapped again in the answer.
func outputTool(schema json.RawMessage) (tool.Tool, error) {
	var top map[string]any
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("agent: output schema: %w", err)
	}
	wrapped := top["type"] != "object"
	input := schema
	if wrapped {
		b, err := json.Marshal(map[string]any{
			"type":                 "object",
			"properties":           map[string]json.RawMessage{wrapProperty: schema},
			"required":             []string{wrapProperty},
			"additionalProperties": false,
		})
		if err != nil {
			return nil, fmt.Errorf("agent: output schema: %w", err)
		}
		input = b
	}
	desc := "Give your final answer as structured data. Call it exactly once, when the task is done; its input is validated against the schema, and a valid call ends your work."
	if wrapped {
		desc += " Put the answer in the \"" + wrapProperty + "\" property."
	}
	t, err := tool.NewRaw(StructuredOutputName, desc, input,
		func(_ context.Context, _ *tool.Env, in json.RawMessage) (*tool.Result, error) {
			v := in
			if wrapped {
				var m map[string]json.RawMessage
				if err := json.Unmarshal(in, &m); err != nil {
					return nil, err
				}
				v = m[wrapProperty]
			}
			r := tool.TextResult("Structured output accepted.")
			r.Structured = answer{value: slices.Clone(v)}
			return r, nil
		},
		tool.WithTraits(tool.Traits{ReadOnly: true, ConcurrencySafe: true, NonDestructive: true, Planning: true}),
		tool.PermissionFunc(func(context.Context, *tool.Env, json.RawMessage) tool.PermissionResult {
			return tool.PermissionResult{Behavior: tool.Allow, Reason: "StructuredOutput only ends the run with its answer"}
		}),
		tool.DescribeFunc(func(json.RawMessage) string { return "Final answer" }),
	)
	if err != nil {
		return nil, fmt.Errorf("agent: output schema: %w", err)
	}
	return t, nil
}

// resolver is the executor's view of an agent's tools: the pool, plus the
// final-answer tool while a structured run is on.
type resolver struct {
	pool   *toolset.Pool
	output atomic.Pointer[tool.Tool]
}

// Lookup implements executor.Resolver.
func (r *resolver) Lookup(name string) (tool.Tool, bool) {
	if p := r.output.Load(); p != nil && name == StructuredOutputName {
		return *p, true
	}
	return r.pool.Lookup(name)
}

// Names implements executor.Resolver.
func (r *resolver) Names() []string {
	names := r.pool.Names()
	if r.output.Load() != nil {
		names = append(names, StructuredOutputName)
	}
	return names
}

// Unloaded implements executor.UnloadedReporter (the deferred-tool hint)
// by asking the pool.
func (r *resolver) Unloaded(name string) bool {
	if name == StructuredOutputName && r.output.Load() != nil {
		return false
	}
	return r.pool.Unloaded(name)
}

var _ executor.UnloadedReporter = (*resolver)(nil)

// outputRun is the structured-output state of one run.
type outputRun struct {
	tool     tool.Tool
	failures int
	max      int
	native   bool
	wrapped  bool
}

// startOutput sets up the run's final-answer tool for schema (nil: a run
// without structured output).
func (r *run) startOutput(schema json.RawMessage) error {
	if len(schema) == 0 {
		return nil
	}
	t, err := outputTool(schema)
	if err != nil {
		return err
	}
	n := r.a.opts.OutputRetries
	if n <= 0 {
		n = DefaultOutputRetries
	}
	r.out = &outputRun{tool: t, max: n}
	switch r.a.opts.OutputStrategy {
	case "", OutputTool:
		r.a.resolver.output.Store(&t)
	case OutputNative:
		if r.a.opts.ToolProtocol == texttools.Text {
			return errors.New("agent: the native output strategy needs the native tool protocol")
		}
		r.out.native = true
		r.out.wrapped = !isObjectSchema(schema)
	default:
		return fmt.Errorf("agent: unknown output strategy %q", r.a.opts.OutputStrategy)
	}
	return nil
}

func isObjectSchema(schema json.RawMessage) bool {
	var top map[string]any
	return json.Unmarshal(schema, &top) == nil && top["type"] == "object"
}

// nativeAnswer checks the text of a turn that ended a native structured
// run: the answer, or the error to tell the model.
func (r *run) nativeAnswer(ctx context.Context, text string) (json.RawMessage, error) {
	// The provider was sent the tool's input schema (a non-object schema
	// wrapped), so the text is such an input.
	input := json.RawMessage(strings.TrimSpace(text))
	in, err := executor.ValidateInput(ctx, r.out.tool, r.a.execSess.Env(), input)
	if err != nil {
		return nil, err
	}
	if !r.out.wrapped {
		return in, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(in, &m); err != nil {
		return nil, err
	}
	return m[wrapProperty], nil
}

// outputSchema is the schema a native run sends with each request.
func (r *run) outputSchema() json.RawMessage {
	if r.out == nil || !r.out.native {
		return nil
	}
	return r.out.tool.Spec().InputSchema
}

// endOutput removes the final-answer tool when the run ends.
func (r *run) endOutput() {
	if r.out != nil && !r.out.native {
		r.a.resolver.output.Store(nil)
	}
}

// checkOutput looks at a batch's final-answer calls: the first valid one
// gives the answer; otherwise a failed one counts against the retries.
// It returns the answer, or whether the retries are used up.
func (r *run) checkOutput(batch *executor.Batch) (json.RawMessage, bool) {
	if r.out == nil || batch == nil {
		return nil, false
	}
	failed := false
	for _, o := range batch.Outcomes {
		if o.Name != StructuredOutputName || o.Result == nil {
			continue
		}
		if v, ok := o.Result.Structured.(answer); ok && !o.Result.IsError {
			return v.value, false
		}
		failed = true
	}
	if failed {
		r.out.failures++
	}
	return nil, r.out.failures >= r.out.max
}

// outputExhausted finishes a run whose final-answer attempts are used up.
func (r *run) outputExhausted() {
	r.finish(SubtypeMaxStructuredRetries, true,
		fmt.Sprintf("no valid structured output after %d attempts", r.out.failures), nil)
}

// PromptAs runs prompt to the end with a final answer of type T, whose
// JSON Schema is inferred the way [tool.NewTyped] infers input schemas
// ([tool.InferSchema]: T is a struct), and decodes the answer into T. The
// schema replaces [Options.OutputSchema] for this run. The result is
// returned with the error too; a run that ended without a valid answer
// gives an error wrapping [ErrNoStructuredOutput].
func PromptAs[T any](ctx context.Context, a *Agent, prompt string) (T, *ResultEvent, error) {
	var zero T
	schema, err := tool.InferSchema[T]()
	if err != nil {
		return zero, nil, fmt.Errorf("agent: PromptAs: %w", err)
	}
	var res *ResultEvent
	var last error
	for ev, err := range a.run(ctx, []llm.Block{llm.Text(prompt)}, schema) {
		if err != nil {
			last = err
			continue
		}
		if r, ok := ev.(*ResultEvent); ok {
			res = r
		}
	}
	if last != nil {
		return zero, res, last
	}
	if res == nil || len(res.Structured) == 0 {
		why := "no result"
		if res != nil {
			why = res.Subtype + ": " + res.Text
		}
		return zero, res, fmt.Errorf("%w (%s)", ErrNoStructuredOutput, why)
	}
	var v T
	if err := json.Unmarshal(res.Structured, &v); err != nil {
		return zero, res, fmt.Errorf("agent: PromptAs: decode the answer: %w", err)
	}
	return v, res, nil
}

// outputSpecs adds the final-answer tool's spec to the pool's.
func (r *run) outputSpecs(specs []*tool.Spec) []*tool.Spec {
	if r.out == nil || r.out.native {
		return specs
	}
	return append(slices.Clip(specs), r.out.tool.Spec())
}

// outputSystem adds the structured-output instructions to the system
// prompt blocks.
func (r *run) outputSystem(blocks []llm.SystemBlock) []llm.SystemBlock {
	switch {
	case r.out == nil:
		return blocks
	case r.out.native:
		return append(blocks, llm.SystemBlock{Text: nativeInstructions})
	}
	return append(blocks, llm.SystemBlock{Text: outputInstructions})
}
