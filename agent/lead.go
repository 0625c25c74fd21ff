package agent

import (
	"context"

	"github.com/gantry-dev/gantry/subagent"
)

// lead is a root agent as the lead of teams ([subagent.Lead]): the team
// runner in the workspace's services starts the members through it, as
// long-lived background subagents ([Agent.StartSubagent] with Idle).
type lead struct{ a *Agent }

var _ subagent.Lead = lead{}

func (l lead) SessionID() string { return l.a.id }

func (l lead) Wake() { l.a.wakeRun() }

func (l lead) StartMember(ctx context.Context, m subagent.Member) (subagent.MemberHandle, error) {
	o := SubagentOptions{
		Type: m.Type, Prompt: m.Prompt, Description: m.Description, Name: m.Name,
		Services: m.Services, Idle: m.Idle, WakePrompt: m.WakePrompt,
	}
	if m.OnState != nil {
		o.OnState = func(state string, res *ResultEvent) {
			var rr *subagent.RunResult
			if res != nil {
				rr = &subagent.RunResult{Subtype: res.Subtype, IsError: res.IsError, Text: res.Text}
			}
			m.OnState(state, rr)
		}
	}
	s, err := l.a.StartSubagent(ctx, o)
	if err != nil {
		return nil, err
	}
	return member{s: s, a: l.a}, nil
}

// member is a running team member: a background subagent of the lead.
type member struct {
	s *Subagent
	a *Agent
}

func (m member) TaskID() string                 { return m.s.TaskID }
func (m member) Done() <-chan struct{}          { return m.s.Done() }
func (m member) Stop(ctx context.Context) error { return m.a.ws.StopBackground(ctx, m.s.TaskID) }
