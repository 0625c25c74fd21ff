package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gantry-dev/gantry/internal/benchcpu"
	"github.com/gantry-dev/gantry/tool"
)

// bigPool assembles 40 built-ins and 200 MCP tools (4 servers of 50).
func bigPool(tb testing.TB, reg *Registry, mcp map[string][]tool.Tool, opts Options) *Pool {
	opts.Registry = reg
	p, err := NewPool(context.Background(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	for s, ts := range mcp {
		if err := p.AddMCP(s, ts...); err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

func mcpServers() map[string][]tool.Tool {
	m := make(map[string][]tool.Tool)
	for _, s := range []string{"github", "gitlab", "jira", "slack"} {
		m[s] = mcpTools(s, 50)
	}
	return m
}

// BenchmarkAssemble assembles a pool of 40 built-ins and 200 MCP tools and
// takes the model's view. "factories" includes building the 40 built-ins
// (tool.NewRaw compiles each schema); "prebuilt" registers built tools, so
// it measures the pool alone.
func BenchmarkAssemble(b *testing.B) {
	servers := mcpServers()
	prebuilt := NewRegistry()
	for _, f := range fixtureTools {
		if err := prebuilt.RegisterTool(f.build(), TierCore, ""); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		reg  *Registry
	}{{"factories", builtinRegistry()}, {"prebuilt", prebuilt}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			defer benchcpu.Start(b)()
			for b.Loop() {
				p := bigPool(b, c.reg, servers, Options{})
				if n := len(p.Tools()); n != 240 {
					b.Fatalf("%d tools", n)
				}
			}
		})
	}
}

func BenchmarkFormats(b *testing.B) {
	p := bigPool(b, builtinRegistry(), mcpServers(), Options{})
	p.Build()
	b.Run("Specs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p.Specs()
		}
	})
	b.Run("MCP", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(p.MCP()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Markdown", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p.Markdown()
		}
	})
	b.Run("Lookup", func(b *testing.B) {
		for b.Loop() {
			if _, ok := p.Lookup("mcp__slack__search_issue"); !ok {
				b.Fatal("not found")
			}
		}
	})
}

func BenchmarkSearch(b *testing.B) {
	p := bigPool(b, builtinRegistry(), mcpServers(), Options{Defer: true, DeferMCPOver: 10})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Search("create issue", 5); err != nil {
			b.Fatal(err)
		}
		p.ResetLoaded()
	}
}

// requestToolChars is the size in characters of the tools the model sees
// (the pool's view), serialised as MCP tool definitions: name, description
// and schema, like a provider's tools part.
func requestToolChars(tb testing.TB, p *Pool) int {
	b, err := json.Marshal(specsMCP(p))
	if err != nil {
		tb.Fatal(err)
	}
	return len([]rune(string(b)))
}

// TestDeferralHalvesRequest measures the tools part of a request with the 40
// fixture built-ins in full and with deferral on; deferral must cut it by at
// least half.
func TestDeferralHalvesRequest(t *testing.T) {
	full := requestToolChars(t, newPool(t, Options{Registry: builtinRegistry()}))
	deferred := requestToolChars(t, newPool(t, Options{Registry: builtinRegistry(), Defer: true}))
	t.Logf("tools the model sees, 40 built-ins: full %d chars, deferred %d chars (%.0f%% saved)", full, deferred, 100*(1-float64(deferred)/float64(full)))
	if deferred*2 > full {
		t.Fatalf("deferral cut %d → %d chars, less than half", full, deferred)
	}
}

func BenchmarkRequestSize(b *testing.B) {
	for _, d := range []bool{false, true} {
		b.Run(fmt.Sprintf("defer=%v", d), func(b *testing.B) {
			p := newPool(b, Options{Registry: builtinRegistry(), Defer: d})
			var n int
			for b.Loop() {
				n = requestToolChars(b, p)
			}
			b.ReportMetric(float64(n), "chars")
		})
	}
}

// specsMCP converts the pool's view ([Pool.Specs]) to MCP tool definitions,
// a provider-neutral serialisation of what a request carries.
func specsMCP(p *Pool) []any {
	var out []any
	for _, s := range p.Specs() {
		out = append(out, MCPTool(s))
	}
	return out
}
