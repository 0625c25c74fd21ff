package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

type greetIn struct {
	Name  string `json:"name" jsonschema:"Who to greet"`
	Times int    `json:"times,omitempty"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
	Count    int    `json:"count"`
}

func greet(_ context.Context, _ *Env, in greetIn) (string, error) {
	if in.Name == "fail" {
		return "", errors.New("cannot greet fail")
	}
	return strings.Repeat("hello "+in.Name+"\n", max(in.Times, 1)), nil
}

func TestConstructorErrors(t *testing.T) {
	raw := func(context.Context, *Env, json.RawMessage) (*Result, error) { return nil, nil }
	noIn := func(context.Context, *Env) (*Result, error) { return nil, nil }
	tests := []struct {
		name string
		make func() (*FuncTool, error)
		want string
	}{
		{"empty name", func() (*FuncTool, error) { return NewText("", "d", greet) }, "invalid name"},
		{"name with space", func() (*FuncTool, error) { return NewText("a b", "d", greet) }, "invalid name"},
		{"name too long", func() (*FuncTool, error) { return NewText(strings.Repeat("n", 65), "d", greet) }, "invalid name"},
		{"bad alias", func() (*FuncTool, error) { return NewText("Greet", "d", greet, WithAliases("gr eet")) }, `invalid name "gr eet"`},
		{"empty description", func() (*FuncTool, error) { return NewText("Greet", "", greet) }, "empty description"},
		{"nil func", func() (*FuncTool, error) { return NewText[greetIn]("Greet", "d", nil) }, "nil function"},
		{"nil New func", func() (*FuncTool, error) { return New[greetIn]("Greet", "d", nil) }, "nil function"},
		{"nil typed func", func() (*FuncTool, error) { return NewTyped[greetIn, greetOut]("Greet", "d", nil) }, "nil function"},
		{"nil no-input func", func() (*FuncTool, error) { return NewNoInput("Greet", "d", nil) }, "nil function"},
		{"nil raw func", func() (*FuncTool, error) { return NewRaw("Greet", "d", EmptyObjectSchema, nil) }, "nil function"},
		{"non-struct input", func() (*FuncTool, error) {
			return NewText("Greet", "d", func(context.Context, *Env, string) (string, error) { return "", nil })
		}, "is not a struct"},
		{"non-struct output", func() (*FuncTool, error) {
			return NewTyped("Greet", "d", func(context.Context, *Env, greetIn) (string, error) { return "", nil })
		}, "output:"},
		{"raw schema not an object", func() (*FuncTool, error) { return NewRaw("R", "d", json.RawMessage(`{"type":"string"}`), raw) }, "bad input schema"},
		{"raw schema not JSON", func() (*FuncTool, error) { return NewRaw("R", "d", json.RawMessage(`{`), raw) }, "bad input schema"},
		{"raw schema uncompilable", func() (*FuncTool, error) {
			return NewRaw("R", "d", json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/nope"}}}`), raw)
		}, "bad input schema"},
		{"schema broken by WithSpec", func() (*FuncTool, error) {
			return NewNoInput("N", "d", noIn, WithSpec(func(s *Spec) { s.InputSchema = json.RawMessage(`{}`) }))
		}, "bad input schema"},
		{"nil TraitsFunc", func() (*FuncTool, error) { return NewText("Greet", "d", greet, TraitsFunc[greetIn](nil)) }, "nil TraitsFunc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.make()
			if err == nil {
				t.Fatalf("no error; tool %+v", got.Spec())
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

func TestNewTextCall(t *testing.T) {
	g, err := NewText("Greet", "Greets someone.", greet, WithAliases("Hello"), WithPrompt("Use it politely."))
	if err != nil {
		t.Fatal(err)
	}
	spec := g.Spec()
	if spec.Name != "Greet" || spec.Description != "Greets someone." || spec.Prompt != "Use it politely." || strings.Join(spec.Names(), ",") != "Greet,Hello" {
		t.Fatalf("spec = %+v", spec)
	}
	want := `{"type":"object","properties":{"name":{"type":"string","description":"Who to greet"},"times":{"type":"integer"}},"required":["name"],"additionalProperties":false}`
	if string(spec.InputSchema) != want {
		t.Fatalf("schema %s", spec.InputSchema)
	}
	ctx := context.Background()
	tests := []struct {
		input   string
		want    string
		wantErr string
	}{
		{`{"name":"Ada","times":2}`, "hello Ada\nhello Ada\n", ""},
		{`{"name":"Ada"}`, "hello Ada\n", ""},
		{``, "hello \n", ""}, // empty input decodes as {}
		{`{"name":5}`, "", "invalid input"},
		{`not json`, "", "invalid input"},
		{`{"name":"fail"}`, "", "cannot greet fail"},
	}
	for _, tt := range tests {
		res, err := g.Call(ctx, &Env{}, json.RawMessage(tt.input))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Call(%s) error = %v, want %q", tt.input, err, tt.wantErr)
			}
			continue
		}
		if err != nil || res.TextContent() != tt.want || res.IsError {
			t.Errorf("Call(%s) = %+v, %v; want %q", tt.input, res, err, tt.want)
		}
	}
}

func TestNewTyped(t *testing.T) {
	g, err := NewTyped("Greet", "Greets.", func(_ context.Context, _ *Env, in greetIn) (greetOut, error) {
		if in.Name == "" {
			return greetOut{}, errors.New("no name")
		}
		return greetOut{Greeting: "hi " + in.Name, Count: in.Times}, nil
	}, ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	if string(g.Spec().OutputSchema) != `{"type":"object","properties":{"greeting":{"type":"string"},"count":{"type":"integer"}},"required":["greeting","count"],"additionalProperties":false}` {
		t.Fatalf("output schema %s", g.Spec().OutputSchema)
	}
	res, err := g.Call(context.Background(), nil, json.RawMessage(`{"name":"Ada","times":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Structured != (greetOut{Greeting: "hi Ada", Count: 3}) {
		t.Fatalf("Structured = %#v", res.Structured)
	}
	if res.TextContent() != "{\n  \"greeting\": \"hi Ada\",\n  \"count\": 3\n}" {
		t.Fatalf("text = %q", res.TextContent())
	}
	if _, err := g.Call(context.Background(), nil, json.RawMessage(`{}`)); err == nil || err.Error() != "no name" {
		t.Fatalf("error = %v", err)
	}
	if _, err := g.Call(context.Background(), nil, json.RawMessage(`{"times":"x"}`)); err == nil || !strings.Contains(err.Error(), "invalid input") {
		t.Fatalf("decode error = %v", err)
	}
	bad, err := NewTyped("Bad", "Bad output.", func(context.Context, *Env, greetIn) (struct {
		C chan int `json:"-"`
		F float64  `json:"f"`
	}, error) {
		return struct {
			C chan int `json:"-"`
			F float64  `json:"f"`
		}{F: 1}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Call(context.Background(), nil, nil); err != nil {
		t.Fatalf("output with a skipped chan: %v", err)
	}
}

func TestNewNoInputAndNewRaw(t *testing.T) {
	n := Must(NewNoInput("List", "Lists.", func(context.Context, *Env) (*Result, error) { return TextResult("none"), nil }))
	if string(n.Spec().InputSchema) != string(EmptyObjectSchema) {
		t.Fatal("no-input schema")
	}
	if res, err := n.Call(context.Background(), nil, json.RawMessage(`{"ignored":1}`)); err != nil || res.TextContent() != "none" {
		t.Fatal("no-input call")
	}
	r, err := NewRaw("Echo", "Echoes.", json.RawMessage("{\n  \"type\": \"object\",\n  \"properties\": {\"x\": {\"type\": \"string\"}}\n}"),
		func(_ context.Context, _ *Env, in json.RawMessage) (*Result, error) {
			return TextResult(string(in)), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Spec().InputSchema) != `{"type":"object","properties":{"x":{"type":"string"}}}` {
		t.Fatalf("raw schema not compacted: %s", r.Spec().InputSchema)
	}
	if res, _ := r.Call(context.Background(), nil, json.RawMessage(`{"x":"y"}`)); res.TextContent() != `{"x":"y"}` {
		t.Fatal("raw input not passed through")
	}
}

func TestMust(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(error).Error(), "empty description") {
			t.Fatalf("Must did not panic with the error: %v", r)
		}
	}()
	Must(NewText("X", "", greet))
}

func TestOptions(t *testing.T) {
	ctx := context.Background()
	f := false
	g := Must(NewText("Greet", "Greets.", greet,
		WithTraits(Traits{ConcurrencySafe: true}),
		WithAnnotations(Annotations{Title: "Greeter", OpenWorldHint: &f}),
		WithDefer(Deferral{ShouldDefer: true, SearchHint: "say hello"}),
		WithMaxResultChars(-1), WithTimeout(time.Second), WithMaxTimeout(time.Minute),
		WithInterrupt(InterruptBlock), CancelSiblingsOnError(),
		WithSpec(func(s *Spec) { s.Prompt = "edited" }),
	))
	s := g.Spec()
	if s.Traits != (Traits{ConcurrencySafe: true}) || s.Annotations.Title != "Greeter" || s.Annotations.OpenWorld() || !s.Annotations.Destructive() ||
		!s.Defer.ShouldDefer || s.Defer.SearchHint != "say hello" || s.ResultLimit() != -1 || s.Timeout != time.Second ||
		s.MaxTimeout != time.Minute || s.Interrupt != InterruptBlock || !s.CancelSiblingsOnError || s.Prompt != "edited" {
		t.Fatalf("spec = %+v", s)
	}
	ro := Must(NewText("R", "Reads.", greet, ReadOnly()))
	if ro.Spec().Traits != ReadOnlyTraits || !ro.Spec().Annotations.ReadOnlyHint || ro.Spec().Annotations.Destructive() {
		t.Fatalf("ReadOnly: %+v", ro.Spec())
	}
	rt := Must(NewText("R", "Reads.", greet, WithTraits(Traits{ReadOnly: true})))
	if !rt.Spec().Annotations.ReadOnlyHint {
		t.Fatal("read-only traits do not set the read-only annotation")
	}

	// Neutral defaults of a FuncTool without hooks.
	plain := Must(NewText("P", "Plain.", greet))
	in := json.RawMessage(`{"name":"x"}`)
	if plain.Traits(in) != (Traits{}) || plain.ValidateInput(ctx, nil, in) != nil || plain.CheckPermission(ctx, nil, in).Behavior != Passthrough ||
		plain.DescribeCall(in) != "P" || plain.MatchRule("x", in) || plain.CallTimeout(in) != 0 || !plain.Enabled(ctx, nil) {
		t.Fatal("neutral defaults")
	}
}

func TestTypedHooksFailClosed(t *testing.T) {
	ctx := context.Background()
	g := Must(NewText("Greet", "Greets.", greet,
		TraitsFunc(func(in greetIn) Traits {
			if in.Name == "safe" {
				return ReadOnlyTraits
			}
			return Traits{ConcurrencySafe: true}
		}),
		ValidateFunc(func(_ context.Context, _ *Env, in greetIn) error {
			if in.Times > 3 {
				return errors.New("at most 3 times")
			}
			return nil
		}),
		PermissionFunc(func(_ context.Context, _ *Env, in greetIn) PermissionResult {
			if in.Name == "root" {
				return PermissionResult{Behavior: Deny, Reason: "no root"}
			}
			return PermissionResult{Behavior: Allow}
		}),
		DescribeFunc(func(in greetIn) string { return "Greet " + in.Name }),
		RuleMatchFunc(func(spec string, in greetIn) bool { return spec == in.Name }),
		TimeoutFunc(func(in greetIn) time.Duration { return time.Duration(in.Times) * time.Second }),
		EnabledFunc(func(_ context.Context, env *Env) bool { return env != nil && env.SessionID != "" }),
	))
	good := json.RawMessage(`{"name":"safe","times":2}`)
	bad := json.RawMessage(`{"name":`)
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"traits", g.Traits(good), ReadOnlyTraits},
		{"traits of other input", g.Traits(json.RawMessage(`{"name":"x"}`)), Traits{ConcurrencySafe: true}},
		{"traits fail closed", g.Traits(bad), Traits{}},
		{"TraitsOf uses Traiter", TraitsOf(g, good), ReadOnlyTraits},
		{"validate ok", g.ValidateInput(ctx, nil, good) == nil, true},
		{"validate rejects", errText(g.ValidateInput(ctx, nil, json.RawMessage(`{"name":"a","times":4}`))), "at most 3 times"},
		{"validate fails closed", g.ValidateInput(ctx, nil, bad) != nil, true},
		{"permission", g.CheckPermission(ctx, nil, json.RawMessage(`{"name":"root"}`)).Behavior, Deny},
		{"permission allow", g.CheckPermission(ctx, nil, good).Behavior, Allow},
		{"permission fails closed to ask", g.CheckPermission(ctx, nil, bad).Behavior, Ask},
		{"describe", Describe(g, good), "Greet safe"},
		{"describe falls back to the name", g.DescribeCall(bad), "Greet"},
		{"rule match", g.MatchRule("safe", good), true},
		{"rule no match", g.MatchRule("other", good), false},
		{"rule fails closed", g.MatchRule("", bad), false},
		{"timeout", g.CallTimeout(good), 2 * time.Second},
		{"timeout fails to default", g.CallTimeout(bad), time.Duration(0)},
		{"enabled", IsEnabled(ctx, g, &Env{SessionID: "s"}), true},
		{"disabled", IsEnabled(ctx, g, &Env{}), false},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// bare implements only Tool.
type bare struct{ spec Spec }

func (b *bare) Spec() *Spec { return &b.spec }
func (b *bare) Call(context.Context, *Env, json.RawMessage) (*Result, error) {
	return nil, nil
}

// blankDescriber describes every call as "".
type blankDescriber struct{ bare }

func (blankDescriber) DescribeCall(json.RawMessage) string { return "" }

func TestCapabilityHelpersOnBareTools(t *testing.T) {
	b := &bare{spec: Spec{Name: "B", Traits: Traits{ReadOnly: true}}}
	if TraitsOf(b, nil) != (Traits{ReadOnly: true}) {
		t.Fatal("TraitsOf falls back to Spec.Traits")
	}
	if !IsEnabled(context.Background(), b, nil) {
		t.Fatal("IsEnabled defaults to true")
	}
	if Describe(b, nil) != "B" || Describe(&blankDescriber{bare{spec: Spec{Name: "D"}}}, nil) != "D" {
		t.Fatal("Describe falls back to the name")
	}
}
