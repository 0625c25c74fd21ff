package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/mcpserve"
	"github.com/gantry-dev/gantry/tool"
)

// step is the pause between the messages of the tools that log or report
// progress (the suite asks for ~50 ms).
const step = 50 * time.Millisecond

// newServer returns the fixture server: the fixture tools served through a
// real executor (default permission mode, nobody to ask: every fixture
// tool is read-only, so all are allowed), with the fixture resources,
// templates, prompts and completion.
func newServer(workDir string) (*mcpserve.Server, error) {
	pngData, err := redPixelPNG()
	if err != nil {
		return nil, err
	}
	tools := fixtureTools(pngData, sineWAV(440, 8000, 100*time.Millisecond))
	r, err := executor.NewMapResolver(tools...)
	if err != nil {
		return nil, err
	}
	ex := executor.New(r, executor.Options{})
	sess := executor.NewSharedEnv(&tool.Env{WorkDir: workDir, Mode: tool.ModeDefault})
	return mcpserve.New(tools, ex, sess, &mcpserve.Options{
		Name:              "gantry-conformance-fixture",
		Version:           "1.0.0",
		Resources:         fixtureResources(pngData),
		ResourceTemplates: fixtureTemplates(),
		Prompts:           fixturePrompts(pngData),
		Subscriptions:     true,
		Complete:          complete,
		EventStore:        mcp.NewMemoryEventStore(nil),
	})
}

// redPixelPNG encodes a 1×1 red PNG.
func redPixelPNG() ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return b.Bytes(), nil
}

// sineWAV encodes a mono 8-bit PCM WAV of a sine tone.
func sineWAV(freq float64, rate int, d time.Duration) []byte {
	n := int(float64(rate) * d.Seconds())
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + n))
	b.WriteString("WAVEfmt ")
	le(uint32(16))   // fmt chunk size
	le(uint16(1))    // PCM
	le(uint16(1))    // mono
	le(uint32(rate)) // sample rate
	le(uint32(rate)) // byte rate (1 byte per sample)
	le(uint16(1))    // block align
	le(uint16(8))    // bits per sample
	b.WriteString("data")
	le(uint32(n))
	for i := range n {
		b.WriteByte(byte(128 + 100*math.Sin(2*math.Pi*freq*float64(i)/float64(rate))))
	}
	return b.Bytes()
}

// amount is progress data with numbers (mcpserve.ProgressAmount).
type amount struct{ Done, Total float64 }

func (a amount) ProgressAmount() (float64, float64) { return a.Done, a.Total }

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func client(ctx context.Context) (*mcpserve.Client, error) {
	c, ok := mcpserve.ClientFrom(ctx)
	if !ok {
		return nil, errors.New("this tool needs an MCP client (it runs only when served by mcpserve)")
	}
	return c, nil
}

type samplingIn struct {
	Prompt string `json:"prompt" jsonschema:"the prompt to send to the client's model"`
}

type elicitIn struct {
	Message string `json:"message" jsonschema:"the message to show the user"`
}

type address struct {
	Street string `json:"street,omitempty"`
	City   string `json:"city,omitempty"`
}

type schemaIn struct {
	Name    string   `json:"name,omitempty"`
	Address *address `json:"address,omitempty"`
}

// schema2020 is the input schema of json_schema_2020_12_tool: JSON Schema
// 2020-12 keywords ($schema, $defs, $ref) the server must send unchanged.
const schema2020 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "type": "object",
      "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"}
  },
  "additionalProperties": false
}`

func fixtureTools(pngData, wavData []byte) []tool.Tool {
	ro := tool.ReadOnly()
	return []tool.Tool{
		tool.Must(tool.NewNoInput("test_simple_text", "Returns a simple text.", func(context.Context, *tool.Env) (*tool.Result, error) {
			return tool.TextResult("This is a simple text response for testing."), nil
		}, ro)),
		tool.Must(tool.NewNoInput("test_image_content", "Returns a 1×1 red PNG.", func(context.Context, *tool.Env) (*tool.Result, error) {
			return &tool.Result{Content: []tool.Content{tool.Image(pngData, "image/png")}}, nil
		}, ro)),
		tool.Must(tool.NewNoInput("test_audio_content", "Returns a short WAV tone.", func(context.Context, *tool.Env) (*tool.Result, error) {
			return &tool.Result{Content: []tool.Content{tool.Audio(wavData, "audio/wav")}}, nil
		}, ro)),
		tool.Must(tool.NewNoInput("test_embedded_resource", "Returns an embedded text resource.", func(context.Context, *tool.Env) (*tool.Result, error) {
			return &tool.Result{Content: []tool.Content{
				tool.EmbeddedText("test://embedded-resource", "text/plain", "This is an embedded resource content."),
			}}, nil
		}, ro)),
		tool.Must(tool.NewNoInput("test_multiple_content_types", "Returns text, an image and an embedded resource.", func(context.Context, *tool.Env) (*tool.Result, error) {
			return &tool.Result{Content: []tool.Content{
				tool.Text("Multiple content types test:"),
				tool.Image(pngData, "image/png"),
				tool.EmbeddedText("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`),
			}}, nil
		}, ro)),
		tool.Must(tool.NewNoInput("test_tool_with_logging", "Sends three log messages while it runs.", func(ctx context.Context, _ *tool.Env) (*tool.Result, error) {
			c, err := client(ctx)
			if err != nil {
				return nil, err
			}
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					if err := sleep(ctx, step); err != nil {
						return nil, err
					}
				}
				if err := c.Log(ctx, "info", "test_tool_with_logging", msg); err != nil {
					return nil, err
				}
			}
			return tool.TextResult("Tool with logging executed successfully"), nil
		}, ro)),
		tool.Must(tool.NewNoInput("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100.", func(ctx context.Context, env *tool.Env) (*tool.Result, error) {
			for i, done := range []float64{0, 50, 100} {
				if i > 0 {
					if err := sleep(ctx, step); err != nil {
						return nil, err
					}
				}
				env.ReportProgress(fmt.Sprintf("%.0f%% done", done), amount{done, 100})
			}
			return tool.TextResult("Tool with progress executed successfully"), nil
		}, ro)),
		tool.Must(tool.NewNoInput("test_error_handling", "Always fails.", func(context.Context, *tool.Env) (*tool.Result, error) {
			return nil, errors.New("This tool intentionally returns an error for testing")
		}, ro)),
		tool.Must(tool.NewText("test_sampling", "Asks the client's model to answer a prompt.", func(ctx context.Context, _ *tool.Env, in samplingIn) (string, error) {
			c, err := client(ctx)
			if err != nil {
				return "", err
			}
			res, err := c.CreateMessage(ctx, &mcp.CreateMessageParams{
				Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
				MaxTokens: 100,
			})
			if err != nil {
				return "", err
			}
			text := ""
			if tc, ok := res.Content.(*mcp.TextContent); ok {
				text = tc.Text
			}
			return "LLM response: " + text, nil
		}, ro)),
		tool.Must(tool.NewText("test_elicitation", "Asks the user for a username and an email.", func(ctx context.Context, _ *tool.Env, in elicitIn) (string, error) {
			return elicit(ctx, "User response: ", in.Message, map[string]any{
				"type": "object",
				"properties": map[string]any{
					"username": map[string]any{"type": "string", "description": "User's response"},
					"email":    map[string]any{"type": "string", "description": "User's email address"},
				},
				"required": []string{"username", "email"},
			})
		}, ro)),
		tool.Must(tool.NewNoInput("test_elicitation_sep1034_defaults", "Asks the user for values with defaults (SEP-1034).", func(ctx context.Context, _ *tool.Env) (*tool.Result, error) {
			text, err := elicit(ctx, "Elicitation completed: ", "Please review and update the form fields with defaults", map[string]any{
				"type": "object",
				"properties": map[string]any{
					"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
					"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
					"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
					"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
					"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
				},
				"required": []string{},
			})
			if err != nil {
				return nil, err
			}
			return tool.TextResult(text), nil
		}, ro)),
		tool.Must(tool.NewNoInput("test_elicitation_sep1330_enums", "Asks the user to choose among enums (SEP-1330).", func(ctx context.Context, _ *tool.Env) (*tool.Result, error) {
			titled := func(pairs ...string) []map[string]any {
				var out []map[string]any
				for i := 0; i+1 < len(pairs); i += 2 {
					out = append(out, map[string]any{"const": pairs[i], "title": pairs[i+1]})
				}
				return out
			}
			text, err := elicit(ctx, "Elicitation completed: ", "Please select options from the enum fields", map[string]any{
				"type": "object",
				"properties": map[string]any{
					"untitledSingle": map[string]any{"type": "string", "description": "Select one option",
						"enum": []string{"option1", "option2", "option3"}},
					"titledSingle": map[string]any{"type": "string", "description": "Select one option with titles",
						"oneOf": titled("value1", "First Option", "value2", "Second Option", "value3", "Third Option")},
					"legacyEnum": map[string]any{"type": "string", "description": "Select one option (legacy)",
						"enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
					"untitledMulti": map[string]any{"type": "array", "description": "Select multiple options",
						"minItems": 1, "maxItems": 3,
						"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
					"titledMulti": map[string]any{"type": "array", "description": "Select multiple options with titles",
						"minItems": 1, "maxItems": 3,
						"items": map[string]any{"anyOf": titled("value1", "First Choice", "value2", "Second Choice", "value3", "Third Choice")}},
				},
				"required": []string{},
			})
			if err != nil {
				return nil, err
			}
			return tool.TextResult(text), nil
		}, ro)),
		tool.Must(tool.NewRaw("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", json.RawMessage(schema2020),
			func(_ context.Context, _ *tool.Env, raw json.RawMessage) (*tool.Result, error) {
				var in schemaIn
				if err := json.Unmarshal(raw, &in); err != nil {
					return nil, err
				}
				b, _ := json.Marshal(in)
				return tool.TextResult("Received: " + string(b)), nil
			}, ro)),
		tool.Must(tool.NewNoInput("test_reconnection", "Closes its HTTP stream mid-call; the client resumes it (SEP-1699).", func(ctx context.Context, _ *tool.Env) (*tool.Result, error) {
			c, err := client(ctx)
			if err != nil {
				return nil, err
			}
			closed := c.CloseStream(step)
			if err := sleep(ctx, 2*step); err != nil {
				return nil, err
			}
			if !closed {
				return tool.TextResult("Reconnection test completed (the stream could not be closed on this transport)"), nil
			}
			return tool.TextResult("Reconnection test completed"), nil
		}, ro)),
	}
}

// elicit asks the client's user to fill schema and describes the answer.
func elicit(ctx context.Context, prefix, message string, schema map[string]any) (string, error) {
	c, err := client(ctx)
	if err != nil {
		return "", err
	}
	res, err := c.Elicit(ctx, &mcp.ElicitParams{Message: message, RequestedSchema: schema})
	if err != nil {
		return "", err
	}
	content, err := json.Marshal(res.Content)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%saction=%s, content=%s", prefix, res.Action, content), nil
}

func textResource(uri, mimeType, text string) mcp.ResourceHandler {
	return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeType, Text: text}}}, nil
	}
}

func fixtureResources(pngData []byte) []mcpserve.Resource {
	return []mcpserve.Resource{
		{Resource: &mcp.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MIMEType: "text/plain"},
			Read: textResource("test://static-text", "text/plain", "This is the content of the static text resource.")},
		{Resource: &mcp.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource (a 1×1 PNG)", MIMEType: "image/png"},
			Read: func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://static-binary", MIMEType: "image/png", Blob: pngData}}}, nil
			}},
		{Resource: &mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource clients may subscribe to", MIMEType: "text/plain"},
			Read: textResource("test://watched-resource", "text/plain", "Watched resource content")},
	}
}

const dataTemplate = "test://template/{id}/data"

func fixtureTemplates() []mcpserve.ResourceTemplate {
	tmpl := uritemplate.MustNew(dataTemplate)
	return []mcpserve.ResourceTemplate{{
		Template: &mcp.ResourceTemplate{URITemplate: dataTemplate, Name: "template-data", Description: "Data for an id", MIMEType: "application/json"},
		Read: func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			vals := tmpl.Match(req.Params.URI)
			id := vals.Get("id").String()
			if vals == nil || id == "" {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			b, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
		},
	}}
}

func userText(text string) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: text}}
}

func fixturePrompts(pngData []byte) []mcpserve.Prompt {
	return []mcpserve.Prompt{
		{Prompt: &mcp.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments"},
			Get: func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{userText("This is a simple prompt for testing.")}}, nil
			}},
		{Prompt: &mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two required arguments",
			Arguments: []*mcp.PromptArgument{
				{Name: "arg1", Description: "First test argument", Required: true},
				{Name: "arg2", Description: "Second test argument", Required: true},
			}},
			Get: func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				a := req.Params.Arguments
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
					userText(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])),
				}}, nil
			}},
		{Prompt: &mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt embedding a resource",
			Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
			Get: func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
					{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
						URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing.",
					}}},
					userText("Please process the embedded resource above."),
				}}, nil
			}},
		{Prompt: &mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
			Get: func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
					{Role: "user", Content: &mcp.ImageContent{Data: pngData, MIMEType: "image/png"}},
					userText("Please analyze the image above."),
				}}, nil
			}},
	}
}

// completions are the candidate values of the completable arguments, by
// reference ("prompt:NAME" or "resource:TEMPLATE") and argument name.
var completions = map[string]map[string][]string{
	"prompt:test_prompt_with_arguments": {
		"arg1": {"paris", "park", "party", "test", "testing", "tested"},
		"arg2": {"alpha", "beta", "gamma"},
	},
	"resource:" + dataTemplate: {"id": {"1", "2", "3", "123"}},
}

// complete suggests the candidates that start with the typed value.
func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	if p == nil || p.Ref == nil {
		return nil, errors.New("completion needs a reference")
	}
	key := ""
	switch p.Ref.Type {
	case "ref/prompt":
		key = "prompt:" + p.Ref.Name
	case "ref/resource":
		key = "resource:" + p.Ref.URI
	default:
		return nil, fmt.Errorf("unknown reference type %q", p.Ref.Type)
	}
	values := []string{}
	for _, v := range completions[key][p.Argument.Name] {
		if strings.HasPrefix(v, p.Argument.Value) {
			values = append(values, v)
		}
	}
	slices.Sort(values)
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}
