package team

import (
	"context"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

// TestJoin: the lead adds a member to its running team; every refusal is
// an error result that says why, and a failed start is recorded.
func TestJoin(t *testing.T) {
	ctx := context.Background()
	st := new(store.Memory)
	fr := &fakeRunner{st: st, fail: "broken"}
	must := func(tm store.Team, err error) store.Team {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	must(st.CreateTeam(ctx, store.Team{Name: "red", Lead: "lead-1", Members: []store.Member{{Name: "alice"}}}))
	must(st.CreateTeam(ctx, store.Team{Name: "other", Lead: "lead-2"}))
	must(st.CreateTeam(ctx, store.Team{Name: "gone", Lead: "lead-1"}))
	must(st.DeleteTeam(ctx, "gone"))
	lead := &tool.Env{SessionID: "lead-1", Services: services(st, fr, nil)}

	r, err := Join(ctx, lead, "red", store.Member{Name: "bob", AgentType: "Explore"}, "look around")
	if err != nil || r.IsError {
		t.Fatalf("join: %v %v", err, r)
	}
	got := must(st.GetTeam(ctx, "red"))
	if b, ok := got.Member("bob"); !ok || b.Status != store.MemberRunning || b.AgentType != "Explore" {
		t.Fatalf("bob %+v in %+v", b, got)
	}
	if fr.prompts["bob"] != "look around" || !strings.Contains(r.TextContent(), "bob joined team red") {
		t.Fatalf("prompt %q, result %q", fr.prompts["bob"], r.TextContent())
	}

	member := &tool.Env{SessionID: "m", Services: services(st, fr, &store.Scope{Team: "red", Name: "alice"})}
	for _, tc := range []struct {
		env        *tool.Env
		team, name string
		want       string
	}{
		{lead, "red", "bob", "used"},
		{lead, "red", "lead", "reserved"},
		{lead, "red", "a b", "may only hold"},
		{lead, "nope", "x", "no team nope"},
		{lead, "gone", "x", "deleted"},
		{lead, "other", "x", "another session"},
		{member, "red", "x", "only the lead"},
		{&tool.Env{SessionID: "lead-1", Services: services(st, nil, nil)}, "red", "x", "cannot run"},
		{&tool.Env{SessionID: "lead-1"}, "red", "x", "not available"},
		{lead, "red", "broken", "could not start: no model"},
	} {
		r, err := Join(ctx, tc.env, tc.team, store.Member{Name: tc.name}, "p")
		if err != nil || !r.IsError || !strings.Contains(r.TextContent(), tc.want) {
			t.Errorf("%s/%s: %v %v, want an error result with %q", tc.team, tc.name, err, r.TextContent(), tc.want)
		}
	}
	if b, _ := must(st.GetTeam(ctx, "red")).Member("broken"); b.Status != store.MemberFailed || !strings.Contains(b.Note, "no model") {
		t.Fatalf("failed start not recorded: %+v", b)
	}
}
