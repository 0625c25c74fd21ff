package team

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/subagent"
	"github.com/gantry-dev/gantry/tool"
)

// LeadRunner is the [Runner] a workspace provides: it runs team members as
// long-lived background subagents of the session's lead (the
// [subagent.Lead] in the caller's services, which the agent loop provides
// for its root agent), each idle between its runs until a message arrives
// in its mailbox. It is also the [subagent.Teams] the lead's loop waits on
// at the end of a turn. Create it with [NewRunner]; it is safe for
// concurrent use.
type LeadRunner struct {
	mu      sync.Mutex
	members map[string][]*member // by team
	changed chan struct{}        // signalled when a member's state changes
}

type member struct {
	name, team string
	lead       subagent.Lead
	h          subagent.MemberHandle

	mu   sync.Mutex
	busy bool // starting or running a turn
}

var (
	_ Runner         = (*LeadRunner)(nil)
	_ subagent.Teams = (*LeadRunner)(nil)
)

// NewRunner returns a runner with no members.
func NewRunner() *LeadRunner {
	return &LeadRunner{members: map[string][]*member{}, changed: make(chan struct{}, 1)}
}

// CanLead reports whether env's session can lead a team here: a
// [subagent.Lead] is among its services. The team tools are shown only
// then (or to a member).
func (r *LeadRunner) CanLead(env *tool.Env) bool {
	_, err := tool.Use[subagent.Lead](env)
	return err == nil
}

func (r *LeadRunner) signal(lead subagent.Lead) {
	select {
	case r.changed <- struct{}{}:
	default:
	}
	lead.Wake()
}

// memberWake is the prompt of a member's run after it was idle; the
// messages that woke it follow it (delivered by [Inbox]).
const memberWake = "New team messages have arrived; they follow. Continue your part of the work."

// StartMember implements [Runner]: the member is a long-lived background
// subagent of the lead ([subagent.Lead.StartMember] with Idle): its type's
// prompt and tools, the lead's permission engine and hooks, a
// [store.Scope] naming its team. After each run it mails the lead its
// state and last reply, records it, and waits for its own mailbox.
func (r *LeadRunner) StartMember(ctx context.Context, env *tool.Env, t store.Team, m store.Member, prompt string) error {
	lead, err := tool.Use[subagent.Lead](env)
	if err != nil || env.SessionID != lead.SessionID() {
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
	tm := &member{name: m.Name, team: t.Name, lead: lead, busy: true}
	setStatus := func(s store.MemberStatus, note string) {
		tm.mu.Lock()
		tm.busy = s == store.MemberRunning || s == store.MemberStarting
		tm.mu.Unlock()
		_ = teams.SetMemberStatus(context.Background(), t.Name, m.Name, s, note)
		r.signal(lead)
	}
	box := store.MailboxName(t.Name, m.Name)
	leadBox := store.MailboxName(t.Name, store.LeadMailbox)
	h, err := lead.StartMember(ctx, subagent.Member{
		Type: typ, Prompt: prompt, Description: "team " + t.Name + ": " + m.Name, Name: m.Name,
		Services: func(s *tool.Services) {
			tool.Provide(s, store.Scope{TaskList: t.TaskList, Name: m.Name, Team: t.Name})
		},
		// Idle until a message arrives (one already waiting wakes it at
		// once); the mailbox is delivered by the member's Inbox.
		Idle:       func(ctx context.Context) error { return boxes.Wait(ctx, box, 0) },
		WakePrompt: memberWake,
		OnState: func(state string, res *subagent.RunResult) {
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
				_, _ = boxes.Send(context.Background(), m.Name, []string{leadBox}, report)
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
	tm.h = h
	r.mu.Lock()
	r.members[t.Name] = append(r.members[t.Name], tm)
	r.mu.Unlock()
	return nil
}

// StopTeam implements [Runner].
func (r *LeadRunner) StopTeam(ctx context.Context, name string) error {
	r.mu.Lock()
	ms := r.members[name]
	delete(r.members, name)
	r.mu.Unlock()
	return stopMembers(ctx, ms)
}

func stopMembers(ctx context.Context, ms []*member) error {
	var errs []error
	for _, m := range ms {
		if err := m.h.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	for _, m := range ms {
		select {
		case <-m.h.Done():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return errors.Join(errs...)
}

// StopAll implements [subagent.Teams]: the members of every team lead
// leads are stopped.
func (r *LeadRunner) StopAll(ctx context.Context, lead string) {
	r.mu.Lock()
	var names []string
	for n, ms := range r.members {
		if len(ms) > 0 && ms[0].lead.SessionID() == lead {
			names = append(names, n)
		}
	}
	r.mu.Unlock()
	for _, n := range names {
		_ = r.StopTeam(ctx, n)
	}
}

// busy reports whether a member of a team lead leads is working.
func (r *LeadRunner) busy(lead string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ms := range r.members {
		for _, m := range ms {
			if m.lead.SessionID() != lead {
				continue
			}
			select {
			case <-m.h.Done():
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

// Wait implements [subagent.Teams].
func (r *LeadRunner) Wait(ctx context.Context, env *tool.Env, wake <-chan struct{}, onWake func()) bool {
	if lead, err := tool.Use[subagent.Lead](env); err != nil || lead.SessionID() != env.SessionID {
		return false // not a lead: a member waits in its Idle
	}
	for {
		names, _ := Mailboxes(ctx, env)
		if len(names) == 0 && !r.busy(env.SessionID) {
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
		if !r.busy(env.SessionID) {
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
		case <-r.changed:
		case <-wake:
			onWake()
		case <-ctx.Done():
		}
		cancel()
		wg.Wait()
		if ctx.Err() != nil {
			return false
		}
	}
}
