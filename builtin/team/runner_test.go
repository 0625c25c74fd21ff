package team

import (
	"context"
	"testing"

	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/subagent"
	"github.com/gantry-dev/gantry/tool"
)

// stubLead is a lead whose members are never started.
type stubLead struct{ id string }

func (l stubLead) SessionID() string { return l.id }
func (l stubLead) Wake()             {}
func (l stubLead) StartMember(context.Context, subagent.Member) (subagent.MemberHandle, error) {
	panic("not started in these tests")
}

// TestLeadRunnerNeedsALead: the workspace's runner shows the team tools
// only where a lead is among the services, refuses to start members for a
// session that is not the lead, and does not keep a non-lead waiting.
func TestLeadRunnerNeedsALead(t *testing.T) {
	ctx := context.Background()
	r := NewRunner()
	s := tool.Provide[Runner](&tool.Services{}, r)
	st := new(store.Memory)
	tool.Provide[store.Teams](s, st)
	tool.Provide[store.Mailboxes](s, st)
	noLead := &tool.Env{SessionID: "s1", Services: s}
	if tool.IsEnabled(ctx, NewCreate(), noLead) {
		t.Fatal("TeamCreate shown without a lead")
	}
	withLead := s.Clone()
	tool.Provide[subagent.Lead](withLead, stubLead{id: "lead"})
	leadEnv := &tool.Env{SessionID: "lead", Services: withLead}
	if !tool.IsEnabled(ctx, NewCreate(), leadEnv) {
		t.Fatal("TeamCreate hidden from the lead")
	}
	child := &tool.Env{SessionID: "child", Services: withLead} // a subagent inherits the lead
	if err := r.StartMember(ctx, child, store.Team{Name: "t"}, store.Member{Name: "m"}, "go"); err == nil {
		t.Fatal("a subagent started a member")
	}
	if r.Wait(ctx, child, nil, nil) || r.Wait(ctx, noLead, nil, nil) {
		t.Fatal("a session that leads nothing waited")
	}
	if r.Wait(ctx, leadEnv, nil, nil) {
		t.Fatal("a lead without members or mail waited")
	}
	r.StopAll(ctx, "lead") // nothing to stop
}
