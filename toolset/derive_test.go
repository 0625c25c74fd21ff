package toolset

import (
	"context"
	"slices"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

func TestDerive(t *testing.T) {
	r := NewRegistry()
	for _, n := range []string{"Read", "Write", "Grep", "Agent"} {
		if err := r.RegisterTool(simple(t, n), TierCore, ""); err != nil {
			t.Fatal(err)
		}
	}
	p, err := NewPool(context.Background(), Options{Registry: r, Deny: []string{"Grep"}, Env: &tool.Env{WorkDir: "/parent"}})
	if err != nil {
		t.Fatal(err)
	}
	names := func(p *Pool) []string {
		var out []string
		for _, s := range p.Specs() {
			out = append(out, s.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		parent   []string // a layer pushed on the parent first
		patterns []string
		want     []string
	}{
		{"same tools", nil, nil, []string{"Agent", "Read", "Write"}},
		{"narrowed", nil, []string{"Read", "Grep"}, []string{"Read"}},
		{"all but Agent", nil, []string{"Read", "Write"}, []string{"Read", "Write"}},
		{"inside the parent's stack", []string{"Read", "Agent"}, []string{"Read", "Write"}, []string{"Read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.parent != nil {
				pop := p.Push(tc.parent...)
				defer pop()
			}
			d := p.Derive(&tool.Env{WorkDir: "/child"}, tc.patterns...)
			if got := names(d); !slices.Equal(got, tc.want) {
				t.Fatalf("derived %v, want %v", got, tc.want)
			}
			if _, ok := d.Lookup("Grep"); ok {
				t.Fatal("derived pool resolves a denied tool")
			}
		})
	}
	// The parent is unchanged by its derived pools.
	if got := names(p); !slices.Equal(got, []string{"Agent", "Read", "Write"}) {
		t.Fatalf("parent %v", got)
	}
}
