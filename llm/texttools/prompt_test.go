package texttools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/builtin"
	"github.com/gantry-dev/gantry/internal/benchcpu"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// builtinSpecs are the model's view of a session's pool of the built-in
// tools (about 40, deferred ones behind ToolSearch), as the agent sends.
func builtinSpecs(tb testing.TB) []*tool.Spec {
	reg, err := builtin.Registry(builtin.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	p, err := toolset.NewPool(context.Background(), toolset.Options{Registry: reg, Defer: true, Env: &tool.Env{WorkDir: tb.TempDir()}})
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.Build(); err != nil {
		tb.Fatal(err)
	}
	return p.Specs()
}

// TestPromptSections: the prompt built from each tool's cached section is
// the prompt rendered afresh — the protocol's head, then
// toolset.Markdown of all the tools — for every tool choice, request
// after request, and a tool whose content changed is rendered again.
func TestPromptSections(t *testing.T) {
	specs := append(builtinSpecs(t),
		&tool.Spec{Name: "Doc", Description: "With a doc.", Doc: &tool.Doc{Short: "s", Long: "l", UsageNotes: []string{"n"}}},
		&tool.Spec{Name: "Prompted", Description: "d", Prompt: "More words.", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"array","items":{"type":"string"}}},"required":["x"]}`)},
		&tool.Spec{Name: "Bad", InputSchema: json.RawMessage(`not json`)},
	)
	choices := []llm.ToolChoice{{}, {Mode: llm.ToolChoiceAny}, {Mode: llm.ToolChoiceTool, Name: "Read"}, {DisableParallel: true}}
	var cache llm.ToolEncodings
	check := func(specs []*tool.Spec) {
		t.Helper()
		for _, c := range choices {
			want := Prompt(specs, c)
			md := markdownHead
			for _, s := range specs {
				md += section(s)
			}
			if len(want) < len(md) || want[len(want)-len(md):] != md {
				t.Fatalf("the prompt does not end with the tools' sections")
			}
			for range 2 {
				if got := prompt(specs, c, &cache); got != want {
					t.Fatalf("choice %+v: the prompt from cached sections differs:\n%s\nwant\n%s", c, got, want)
				}
			}
		}
	}
	check(specs)
	n := cache.Len()
	if n != len(specs)+1 { // a section per tool, the first tool's parameter
		t.Errorf("%d entries cached, want %d", n, len(specs)+1)
	}
	// New spec values with the same content: no new entries.
	again := make([]*tool.Spec, len(specs))
	for i, s := range specs {
		c := *s
		again[i] = &c
	}
	check(again)
	if cache.Len() != n {
		t.Errorf("the same content rendered again: %d entries, want %d", cache.Len(), n)
	}
	// A changed description, another first tool.
	changed := *again[3]
	changed.Description += " Changed."
	again[3] = &changed
	again[0], again[1] = again[1], again[0]
	check(again)
	check(nil)
}

// TestPromptAliasesAndDisplayNames: the tools prompt names the tag of
// every Grep parameter whose name is not a tag, and the name people see of
// a tool that has one; otherwise a section is toolset.Markdown's.
func TestPromptAliasesAndDisplayNames(t *testing.T) {
	var grep *tool.Spec
	for _, s := range builtinSpecs(t) {
		if s.Name == "Grep" {
			grep = s
		}
	}
	if grep == nil {
		t.Fatal("no Grep")
	}
	sec := section(grep)
	for _, p := range []string{"-i", "-A", "-B", "-C", "-n", "-o"} {
		tag := p[1:]
		if !strings.Contains(sec, "\n- `"+p+"` (write it as <"+tag+">…</"+tag+">; ") {
			t.Errorf("no alias for %s in:\n%s", p, sec)
		}
	}
	shown := &tool.Spec{Name: "find", Description: "Finds.", Doc: &tool.Doc{DisplayName: "Find files"}}
	if got := section(shown); !strings.HasPrefix(got, "\n## find\n\nShown to the user as: Find files\n\nFinds.") {
		t.Errorf("section %q", got)
	}
	plain := &tool.Spec{Name: "Read", Description: "Reads.", InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}}}`)}
	if got, want := section(plain), strings.TrimPrefix(toolset.Markdown([]*tool.Spec{plain}), markdownHead); got != want {
		t.Errorf("section %q, want %q", got, want)
	}
}

// BenchmarkPrompt is the text protocol's system prompt for the built-in
// tools, on every request: rendered afresh (sections=fresh) and from the
// sections the provider keeps (sections=cached).
func BenchmarkPrompt(b *testing.B) {
	specs := builtinSpecs(b)
	for _, cached := range []bool{false, true} {
		name := "sections=fresh"
		var cache *llm.ToolEncodings
		if cached {
			name, cache = "sections=cached", new(llm.ToolEncodings)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			defer benchcpu.Start(b)()
			for b.Loop() {
				if prompt(specs, llm.ToolChoice{}, cache) == "" {
					b.Fatal("empty")
				}
			}
		})
	}
}
