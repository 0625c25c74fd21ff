package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/builtin/team"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/subagent"
	"github.com/gantry-dev/gantry/tool"
)

// teamRunner is the [team.Runner] of a root agent: it runs team members as
// long-lived background subagents of the agent, each idle between its runs
// until a message arrives in its mailbox.
type teamRunner struct {
	a *Agent

	mu      sync.Mutex
	members map[string][]*teamMember // by team
	changed chan struct{}            // signalled when a member's state changes
}

type teamMember struct {
	name, team string
	sub        *Subagent

	mu   sync.Mutex
	busy bool // starting or running a turn
}

var _ team.Runner = (*teamRunner)(nil)

func newTeamRunner(a *Agent) *teamRunner {
	return &teamRunner{a: a, members: map[string][]*teamMember{}, changed: make(chan struct{}, 1)}
}

func (r *teamRunner) signal() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
	r.a.wakeRun()
}

// memberWake is the prompt of a member's run after it was idle; the
// messages that woke it follow it (delivered by team.Inbox).
const memberWake = "New team messages have arrived; they follow. Continue your part of the work."

// StartMember implements [team.Runner]: the member is a long-lived
// background subagent of the lead ([Agent.StartSubagent] with Idle): its
// type's prompt and tools, the lead's permission engine and hooks, a
// [store.Scope] naming its team. After each run it mails the lead its state
// and last reply, records it, and waits for its own mailbox.
func (r *teamRunner) StartMember(ctx context.Context, env *tool.Env, t store.Team, m store.Member, prompt string) error {
	a := r.a
	if env == nil || env.SessionID != a.id {
		return errors.New("only the main agent of the session leads teams")
	}
	teams, err := tool.Use[store.Teams](env)
	if err != nil {
		return err
	}
	boxes, err := tool.Use[store.Mailboxes](env)
	if err != nil {
		return err
	}
	typ := m.AgentType
	if typ == "" {
		typ = subagent.GeneralPurpose
	}
	tm := &teamMember{name: m.Name, team: t.Name, busy: true}
	setStatus := func(s store.MemberStatus, note string) {
		tm.mu.Lock()
		tm.busy = s == store.MemberRunning || s == store.MemberStarting
		tm.mu.Unlock()
		_ = teams.SetMemberStatus(context.Background(), t.Name, m.Name, s, note)
		r.signal()
	}
	box := store.MailboxName(t.Name, m.Name)
	lead := store.MailboxName(t.Name, store.LeadMailbox)
	sub, err := a.StartSubagent(ctx, SubagentOptions{
		Type: typ, Prompt: prompt, Description: "team " + t.Name + ": " + m.Name, Name: m.Name,
		Services: func(s *tool.Services) {
			tool.Provide(s, store.Scope{TaskList: t.TaskList, Name: m.Name, Team: t.Name})
		},
		// Idle until a message arrives (one already waiting wakes it at
		// once); the mailbox is delivered by the member's team.Inbox.
		Idle:       func(ctx context.Context) error { return boxes.Wait(ctx, box, 0) },
		WakePrompt: memberWake,
		OnState: func(state string, res *ResultEvent) {
			switch state {
			case "running":
				setStatus(store.MemberRunning, "")
			case "idle":
				status, what := store.MemberIdle, "is idle"
				if res.IsError {
					status, what = store.MemberFailed, "stopped with an error ("+res.Subtype+")"
				}
				// The lead learns the member's state and last reply by mail.
				report := fmt.Sprintf("[status] %s %s. Its last reply:\n%s", m.Name, what, strings.TrimSpace(res.Text))
				_, _ = boxes.Send(context.Background(), m.Name, []string{lead}, report)
				setStatus(status, res.Text)
			default: // completed, failed, killed: the member's task ended
				note := ""
				if res != nil && res.IsError {
					note = res.Text
				}
				setStatus(store.MemberStopped, note)
			}
		},
	})
	if err != nil {
		return err
	}
	tm.sub = sub
	r.mu.Lock()
	r.members[t.Name] = append(r.members[t.Name], tm)
	r.mu.Unlock()
	return nil
}

// StopTeam implements [team.Runner].
func (r *teamRunner) StopTeam(ctx context.Context, name string) error {
	r.mu.Lock()
	ms := r.members[name]
	delete(r.members, name)
	r.mu.Unlock()
	var errs []error
	for _, m := range ms {
		if err := r.a.ws.StopBackground(ctx, m.sub.TaskID); err != nil {
			errs = append(errs, err)
		}
	}
	for _, m := range ms {
		select {
		case <-m.sub.Done():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errors.Join(errs...)
}

// stopAll stops the members of every team (the lead is closing).
func (r *teamRunner) stopAll(ctx context.Context) {
	r.mu.Lock()
	var names []string
	for n := range r.members {
		names = append(names, n)
	}
	r.mu.Unlock()
	for _, n := range names {
		_ = r.StopTeam(ctx, n)
	}
}

// busy reports whether a member of a team the agent leads is working.
func (r *teamRunner) busy() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ms := range r.members {
		for _, m := range ms {
			select {
			case <-m.sub.Done():
				continue
			default:
			}
			m.mu.Lock()
			b := m.busy
			m.mu.Unlock()
			if b {
				return true
			}
		}
	}
	return false
}

// waitTeam runs when the lead's model ends its turn. While members of its
// teams are working it waits; it reports true as soon as mail for the lead
// is waiting (the next turn delivers it), false once every member is idle
// and nothing is waiting.
func (r *run) waitTeam(ctx context.Context) bool {
	tr := r.a.teams
	if tr == nil {
		return false
	}
	env := r.a.execSess.Env()
	for {
		names, _ := team.Mailboxes(ctx, env)
		if len(names) == 0 && !tr.busy() {
			return false
		}
		boxes, err := tool.Use[store.Mailboxes](env)
		if err != nil {
			return false
		}
		for _, b := range names {
			if p, err := boxes.Pending(ctx, b, 1); err == nil && len(p) > 0 {
				return true
			}
		}
		if !tr.busy() {
			return false
		}
		wctx, cancel := context.WithCancel(ctx)
		got := make(chan struct{}, 1)
		var wg sync.WaitGroup
		for _, b := range names {
			wg.Go(func() {
				if boxes.Wait(wctx, b, 0) == nil {
					select {
					case got <- struct{}{}:
					default:
					}
				}
			})
		}
		select {
		case <-got:
		case <-tr.changed:
		case <-r.a.notify:
			r.drain()
		case <-ctx.Done():
		}
		cancel()
		wg.Wait()
		if ctx.Err() != nil {
			return false
		}
	}
}
