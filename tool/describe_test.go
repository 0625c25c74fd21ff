package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
	tests := []struct {
		name             string
		spec             Spec
		wantDesc, wantPr string
		wantTitle        string
	}{
		{name: "no doc", spec: Spec{Description: "Plain.", Prompt: "Kept."}, wantDesc: "Plain.", wantPr: "Kept."},
		{name: "zero doc", spec: Spec{Description: "Plain.", Prompt: "Replaced.", Doc: &Doc{}}, wantDesc: "Plain.", wantPr: ""},
		{name: "short wins", spec: Spec{Description: "Plain.", Doc: &Doc{Short: " Short. "}}, wantDesc: "Short."},
		{name: "every part", spec: Spec{Description: "D.", Doc: &Doc{
			DisplayName: "Finder", Long: "Long text.\nSecond line.",
			UsageNotes: []string{"one", " ", "two\nlines"},
			Important:  []string{"careful"},
			Examples:   []Example{{Description: "find x", Input: json.RawMessage(`{ "q" : "x" }`)}},
		}}, wantDesc: "D.", wantTitle: "Finder",
			wantPr: "Long text.\nSecond line.\n\nUsage notes:\n- one\n- two lines\n\nImportant:\n- careful\n\nExamples:\n- find x\n  {\"q\":\"x\"}"},
		{name: "empty lists leave no heading", spec: Spec{Description: "D.", Doc: &Doc{UsageNotes: []string{""}, Important: []string{" "}}}, wantDesc: "D."},
		{name: "title kept", spec: Spec{Description: "D.", Annotations: Annotations{Title: "Mine"}, Doc: &Doc{DisplayName: "Other"}}, wantDesc: "D.", wantTitle: "Mine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.InputSchema = schema
			r := tt.spec.Render()
			if r.Description != tt.wantDesc || r.Prompt != tt.wantPr || r.Annotations.Title != tt.wantTitle {
				t.Fatalf("got %q / %q / %q\nwant %q / %q / %q", r.Description, r.Prompt, r.Annotations.Title, tt.wantDesc, tt.wantPr, tt.wantTitle)
			}
			if rr := r.Render(); rr.Description != r.Description || rr.Prompt != r.Prompt || rr.Annotations.Title != r.Annotations.Title {
				t.Fatal("Render is not idempotent")
			}
			if !r.Rendered() {
				t.Fatal("a rendered spec does not report Rendered")
			}
			if tt.spec.Doc != nil && r == &tt.spec {
				t.Fatal("Render changed its receiver")
			}
		})
	}
}

func TestWithDocBuild(t *testing.T) {
	type in struct {
		Q string `json:"q"`
	}
	noop := func(context.Context, *Env, in) (string, error) { return "", nil }
	ft, err := NewText("Find", "", noop, WithDoc(Doc{Short: "Finds.", DisplayName: "Find things",
		Examples: []Example{{Description: "x", Input: json.RawMessage(`{"q":"x"}`)}}}))
	if err != nil {
		t.Fatal(err)
	}
	if s := ft.Spec(); s.Description != "Finds." || !strings.Contains(s.Prompt, `{"q":"x"}`) || s.DisplayName() != "Find things" || !s.Rendered() {
		t.Fatalf("spec %+v", s)
	}
	for _, bad := range []string{`{"q":1}`, `{}`, `{"q":"x","extra":true}`, `not json`} {
		_, err := NewText("Find", "Finds.", noop, WithDoc(Doc{Examples: []Example{{Description: "bad", Input: json.RawMessage(bad)}}}))
		if !errors.Is(err, ErrBadExample) {
			t.Errorf("example %s: error %v", bad, err)
		}
	}
	both := Must(NewText("Find", "Finds.", noop, WithPrompt("Plain prompt."), WithDoc(Doc{UsageNotes: []string{"n"}})))
	if p := both.Spec().Prompt; p != "Plain prompt.\n\nUsage notes:\n- n" {
		t.Errorf("WithPrompt with WithDoc: %q", p)
	}
	if _, err := NewText("Find", "", noop, WithDoc(Doc{Long: "no short"})); err == nil {
		t.Error("a tool with neither a description nor a Doc.Short builds")
	}
}

func TestApplySession(t *testing.T) {
	base := &Spec{Name: "T", Description: "Static.", Prompt: "Static prompt.", InputSchema: EmptyObjectSchema}
	got, err := ApplySession(base, SessionSpec{Prompt: "Session prompt."})
	if err != nil || got.Description != "Static." || got.Prompt != "Session prompt." || base.Prompt != "Static prompt." {
		t.Fatalf("%+v %v", got, err)
	}
	withDoc := &Spec{Name: "T", Description: "Static.", InputSchema: EmptyObjectSchema, Doc: &Doc{Long: "Doc long.", UsageNotes: []string{"n"}}}
	got, err = ApplySession(withDoc, SessionSpec{Description: "Now.", Prompt: "Session long."})
	if err != nil || got.Description != "Now." || got.Prompt != "Session long.\n\nUsage notes:\n- n" || withDoc.Doc.Long != "Doc long." {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := ApplySession(base, SessionSpec{InputSchema: json.RawMessage(`{"type":"array"}`)}); !errors.Is(err, ErrBadSchema) {
		t.Fatalf("bad session schema: %v", err)
	}
}

type wrapper struct {
	Tool
}

func (w wrapper) Unwrap() Tool { return w.Tool }

type partialTool struct {
	*FuncTool
	got []string
}

func (p *partialTool) ObservePartial(_ context.Context, _ *Env, in json.RawMessage) {
	p.got = append(p.got, string(in))
}

func TestAsAndObservable(t *testing.T) {
	type in struct {
		Path string `json:"path"`
	}
	ft := Must(NewText("Open", "Opens.", func(context.Context, *Env, in) (string, error) { return "", nil },
		BackfillFunc(func(env *Env, in *in) { in.Path = env.WorkDir + "/" + strings.TrimPrefix(in.Path, env.WorkDir+"/") })))
	pt := &partialTool{FuncTool: ft}
	var w Tool = wrapper{wrapper{pt}}
	if o, ok := As[PartialObserver](w); !ok || o != PartialObserver(pt) {
		t.Fatal("As does not find the observer under two wrappers")
	}
	if _, ok := As[CallFactory](w); ok {
		t.Fatal("As finds a capability nobody has")
	}
	loop := &selfWrapper{}
	loop.inner = loop
	if _, ok := As[CallFactory](loop); ok {
		t.Fatal("found in a loop")
	}
	env := &Env{WorkDir: "/w"}
	obs := Observable(ft, env, json.RawMessage(`{"path":"a"}`))
	if string(obs) != `{"path":"/w/a"}` || string(Observable(ft, env, obs)) != string(obs) {
		t.Fatalf("observable %s (must be idempotent)", obs)
	}
	plain := Must(NewText("P", "P.", func(context.Context, *Env, in) (string, error) { return "", nil }))
	if got := Observable(plain, env, json.RawMessage(`{"path":"a"}`)); string(got) != `{"path":"a"}` {
		t.Fatalf("a tool without backfill: %s", got)
	}
	if got := Observable(ft, env, json.RawMessage(`{"path":1}`)); string(got) != `{"path":1}` {
		t.Fatalf("undecodable input is observed as sent: %s", got)
	}
}

type selfWrapper struct {
	*FuncTool
	inner Tool
}

func (s *selfWrapper) Unwrap() Tool { return s.inner }

func TestDescribesSession(t *testing.T) {
	plain := Must(NewNoInput("Plain", "Plain.", func(context.Context, *Env) (*Result, error) { return nil, nil }))
	described := Must(NewNoInput("Described", "Described.", func(context.Context, *Env) (*Result, error) { return nil, nil },
		SessionFunc(func(context.Context, *Env) (SessionSpec, error) { return SessionSpec{}, nil })))
	tests := []struct {
		name string
		t    Tool
		want bool
	}{
		{"constructor without SessionFunc", plain, false},
		{"constructor with SessionFunc", described, true},
		{"custom describer", customDescriber{plain}, true},
		{"wrapper of a describer", unwrapping{described}, true},
		{"wrapper of a plain tool", unwrapping{plain}, false},
	}
	for _, tt := range tests {
		if got := DescribesSession(tt.t); got != tt.want {
			t.Errorf("%s: DescribesSession = %v, want %v", tt.name, got, tt.want)
		}
	}
}

type customDescriber struct{ Tool }

func (customDescriber) DescribeSession(context.Context, *Env) (SessionSpec, error) {
	return SessionSpec{}, nil
}

type unwrapping struct{ Tool }

func (u unwrapping) Unwrap() Tool { return u.Tool }
