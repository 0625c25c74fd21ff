// Package team holds the team tools: TeamCreate starts a named team of
// background agents, TeamDelete stops them (the record stays), SendMessage
// puts a message in a member's (or the lead's) durable mailbox. Messages
// reach an agent at its next turn boundary through [Inbox], in order and
// once each; an idle member is woken by its [Runner].
//
// The records and mailboxes live in the [store.Teams] and [store.Mailboxes]
// of the environment's services; the members are run by a [Runner] service
// (the agent package provides one over its subagent machinery). A [store.Scope]
// service tells a member which team it is in and its name; an agent without
// one is a lead, and its teams are those whose Lead is its session id.
package team

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/textutil"

	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

// Runner runs team members as background agents. Implementations must be
// safe for concurrent use.
type Runner interface {
	// StartMember starts one member of team t (already recorded in the
	// store) working on prompt. The member's services carry a
	// [store.Scope] naming t and the member, and its turn boundaries
	// deliver its mailbox ([Inbox]). It records the member's status in
	// the store as it runs (running, idle, failed) and, when idle, waits
	// for a message in its mailbox to run again.
	StartMember(ctx context.Context, env *tool.Env, t store.Team, m store.Member, prompt string) error
	// StopTeam stops the team's running members and waits for them.
	StopTeam(ctx context.Context, team string) error
}

// MemberInput describes one member in TeamCreate's input.
type MemberInput struct {
	Name         string `json:"name" jsonschema:"The member's name, used as the 'to' of SendMessage and as a task owner (letters, digits, - and _)."`
	SubagentType string `json:"subagent_type,omitempty" jsonschema:"The agent type the member runs as (default general-purpose)."`
	Role         string `json:"role,omitempty" jsonschema:"What the member is for, in a few words."`
	Prompt       string `json:"prompt" jsonschema:"The member's first instructions: its part of the work."`
}

// CreateInput is the input of TeamCreate.
type CreateInput struct {
	TeamName    string        `json:"team_name" jsonschema:"A short name for the team (letters, digits, - and _)."`
	Description string        `json:"description,omitempty" jsonschema:"What the team is for."`
	Members     []MemberInput `json:"members" jsonschema:"The members to start (1 to 8)."`
}

// DeleteInput is the input of TeamDelete.
type DeleteInput struct {
	TeamName string `json:"team_name" jsonschema:"The team to delete."`
}

// SendInput is the input of SendMessage.
type SendInput struct {
	To      string `json:"to" jsonschema:"The recipient: a member's name, \"lead\" for the team's lead, or \"*\" for everyone in the team but you."`
	Message string `json:"message" jsonschema:"The message."`
}

// MaxMembers is how many members TeamCreate starts at most.
const MaxMembers = 8

const (
	createDescription = `Creates a team of background agents that work in parallel and talk to each other. Each member gets a name, an agent type and its first instructions; members share the team's task list (TaskCreate/TaskList/TaskUpdate) and message each other and you with SendMessage. Messages reach an agent at its next turn; an idle member wakes up when it gets one. You are the team's lead: members' messages and status changes come to you the same way. Delete the team with TeamDelete when the work is done.`
	deleteDescription = `Stops every member of a team and closes it. The team's record, task list and messages are kept.`
	sendDescription   = `Sends a message to a member of your team (by name), to the team's lead ("lead"), or to everyone but you ("*"). The message is stored durably and delivered at the recipient's next turn, in order; an idle member wakes up on it.`
)

// enabled shows the team tools only in sessions that can run members (a
// [Runner] among the services that, if it has a CanLead method like
// [LeadRunner], says the session can lead) or that are in a team.
var enabled = tool.EnabledFunc(func(_ context.Context, env *tool.Env) bool {
	if r, err := tool.Use[Runner](env); err == nil {
		if c, ok := r.(interface{ CanLead(*tool.Env) bool }); !ok || c.CanLead(env) {
			return true
		}
	}
	return scopeOf(env).Team != ""
})

// Tools returns TeamCreate, TeamDelete and SendMessage.
func Tools() []tool.Tool { return []tool.Tool{NewCreate(), NewDelete(), NewSend()} }

func scopeOf(env *tool.Env) store.Scope {
	sc, _ := tool.Use[store.Scope](env)
	return sc
}

func sessionID(env *tool.Env) string {
	if env == nil {
		return ""
	}
	return env.SessionID
}

func validName(what, s string) error {
	if s == "" || len(s) > 64 {
		return fmt.Errorf("%s must be 1 to 64 characters", what)
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("%s %q may only hold letters, digits, - and _", what, s)
		}
	}
	return nil
}

// NewCreate returns TeamCreate.
func NewCreate() tool.Tool {
	return tool.Must(tool.New("TeamCreate", createDescription,
		func(ctx context.Context, env *tool.Env, in CreateInput) (*tool.Result, error) {
			teams, err := tool.Use[store.Teams](env)
			if err != nil {
				return tool.Errorf("Teams are not available in this session (%v).", err), nil
			}
			runner, err := tool.Use[Runner](env)
			if err != nil {
				return tool.Errorf("Teams need background agents, which this session cannot run (%v).", err), nil
			}
			if sc := scopeOf(env); sc.Team != "" {
				return tool.Errorf("You are a member of team %s; only a lead creates teams.", sc.Team), nil
			}
			// The team shares the lead's task list.
			t := store.Team{Name: in.TeamName, Description: in.Description, Lead: sessionID(env), TaskList: scopeOf(env).List(sessionID(env))}
			for _, m := range in.Members {
				t.Members = append(t.Members, store.Member{Name: m.Name, AgentType: m.SubagentType, Role: m.Role})
			}
			t, err = teams.CreateTeam(ctx, t)
			if err != nil {
				if errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrInvalid) {
					return tool.ErrorResult(err), nil
				}
				return nil, err
			}
			var failed []string
			for i, m := range t.Members {
				if err := runner.StartMember(ctx, env, t, m, in.Members[i].Prompt); err != nil {
					failed = append(failed, fmt.Sprintf("%s: %v", m.Name, err))
					_ = teams.SetMemberStatus(context.WithoutCancel(ctx), t.Name, m.Name, store.MemberFailed, err.Error())
				}
			}
			if len(failed) == len(t.Members) {
				_, _ = teams.DeleteTeam(context.WithoutCancel(ctx), t.Name)
				return tool.Errorf("No member of team %s could start:\n%s", t.Name, strings.Join(failed, "\n")), nil
			}
			t, _ = teams.GetTeam(ctx, t.Name)
			var b strings.Builder
			fmt.Fprintf(&b, "Team %s started; its task list is %q. You are its lead: members' messages reach you at your next turns.\n%s", t.Name, t.TaskList, Status(t))
			if len(failed) > 0 {
				fmt.Fprintf(&b, "\nNot started:\n%s", strings.Join(failed, "\n"))
			}
			r := tool.TextResult(b.String())
			r.Structured = t
			return r, nil
		},
		tool.WithTraits(tool.Traits{NonDestructive: true}),
		enabled,
		tool.PermissionFunc(func(context.Context, *tool.Env, CreateInput) tool.PermissionResult {
			return tool.PermissionResult{Behavior: tool.Allow, Reason: "TeamCreate starts agents whose every call goes through this session's permissions"}
		}),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in CreateInput) error {
			if err := validName("team_name", in.TeamName); err != nil {
				return err
			}
			if len(in.Members) == 0 || len(in.Members) > MaxMembers {
				return fmt.Errorf("a team has 1 to %d members", MaxMembers)
			}
			seen := map[string]bool{}
			for _, m := range in.Members {
				if err := validName("member name", m.Name); err != nil {
					return err
				}
				if m.Name == store.LeadMailbox || seen[m.Name] {
					return fmt.Errorf("member name %q is reserved or used twice", m.Name)
				}
				seen[m.Name] = true
				if strings.TrimSpace(m.Prompt) == "" {
					return fmt.Errorf("member %s needs a prompt", m.Name)
				}
			}
			return nil
		}),
		tool.DescribeFunc(func(in CreateInput) string {
			return fmt.Sprintf("Create team %s (%d members)", clip(in.TeamName), len(in.Members))
		}),
	))
}

// NewDelete returns TeamDelete.
func NewDelete() tool.Tool {
	return tool.Must(tool.New("TeamDelete", deleteDescription,
		func(ctx context.Context, env *tool.Env, in DeleteInput) (*tool.Result, error) {
			teams, err := tool.Use[store.Teams](env)
			if err != nil {
				return tool.Errorf("Teams are not available in this session (%v).", err), nil
			}
			t, err := teams.GetTeam(ctx, in.TeamName)
			if errors.Is(err, store.ErrNotFound) {
				return tool.ErrorResult(err), nil
			}
			if err != nil {
				return nil, err
			}
			if sc := scopeOf(env); sc.Team != "" || (t.Lead != "" && t.Lead != sessionID(env)) {
				return tool.Errorf("Only the lead of team %s can delete it.", t.Name), nil
			}
			if runner, err := tool.Use[Runner](env); err == nil {
				if err := runner.StopTeam(ctx, t.Name); err != nil {
					return nil, fmt.Errorf("stop team %s: %w", t.Name, err)
				}
			}
			t, err = teams.DeleteTeam(ctx, t.Name)
			if err != nil {
				return nil, err
			}
			r := tool.TextResult(fmt.Sprintf("Team %s deleted; its members are stopped. Its task list %q and record are kept.\n%s", t.Name, t.TaskList, Status(t)))
			r.Structured = t
			return r, nil
		},
		tool.WithTraits(tool.Traits{NonDestructive: true}),
		enabled,
		tool.PermissionFunc(func(context.Context, *tool.Env, DeleteInput) tool.PermissionResult {
			return tool.PermissionResult{Behavior: tool.Allow, Reason: "TeamDelete only stops the session's own team members"}
		}),
		tool.DescribeFunc(func(in DeleteInput) string { return "Delete team " + clip(in.TeamName) }),
	))
}

// NewSend returns SendMessage.
func NewSend() tool.Tool {
	return tool.Must(tool.New("SendMessage", sendDescription,
		func(ctx context.Context, env *tool.Env, in SendInput) (*tool.Result, error) {
			teams, err := tool.Use[store.Teams](env)
			if err != nil {
				return tool.Errorf("Teams are not available in this session (%v).", err), nil
			}
			boxes, err := tool.Use[store.Mailboxes](env)
			if err != nil {
				return tool.Errorf("Mailboxes are not available in this session (%v).", err), nil
			}
			t, me, msg := myTeam(ctx, env, teams)
			if msg != "" {
				return tool.Errorf("%s", msg), nil
			}
			var to []string
			switch in.To {
			case "*":
				if me != store.LeadMailbox {
					to = append(to, store.LeadMailbox)
				}
				for _, m := range t.Members {
					if m.Name != me && m.Status != store.MemberStopped {
						to = append(to, m.Name)
					}
				}
			case store.LeadMailbox:
				to = []string{store.LeadMailbox}
			default:
				m, ok := t.Member(in.To)
				if !ok {
					return tool.Errorf("Team %s has no member %q. Members: %s (and \"lead\").", t.Name, in.To, memberNames(t)), nil
				}
				if m.Status == store.MemberStopped {
					return tool.Errorf("Member %s of team %s is stopped; the message would never be read.", m.Name, t.Name), nil
				}
				to = []string{m.Name}
			}
			if slices.Contains(to, me) {
				return tool.Errorf("You cannot send a message to yourself."), nil
			}
			if len(to) == 0 {
				return tool.Errorf("Nobody else is in team %s.", t.Name), nil
			}
			boxNames := make([]string, len(to))
			for i, n := range to {
				boxNames[i] = store.MailboxName(t.Name, n)
			}
			if _, err := boxes.Send(ctx, me, boxNames, in.Message); err != nil {
				if errors.Is(err, store.ErrInvalid) {
					return tool.ErrorResult(err), nil
				}
				return nil, err
			}
			r := tool.TextResult(fmt.Sprintf("Message sent to %s in team %s.", strings.Join(to, ", "), t.Name))
			r.Structured = map[string]any{"team": t.Name, "to": to}
			return r, nil
		},
		tool.WithTraits(tool.Traits{NonDestructive: true}),
		enabled,
		tool.PermissionFunc(func(context.Context, *tool.Env, SendInput) tool.PermissionResult {
			return tool.PermissionResult{Behavior: tool.Allow, Reason: "SendMessage writes only to the team's mailboxes"}
		}),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in SendInput) error {
			if strings.TrimSpace(in.To) == "" {
				return errors.New(`"to" is required: a member's name, "lead" or "*"`)
			}
			if strings.TrimSpace(in.Message) == "" {
				return errors.New("the message is empty")
			}
			return nil
		}),
		tool.DescribeFunc(func(in SendInput) string { return "Message to " + clip(in.To) }),
	))
}

// myTeam finds the caller's team: the one its scope names, else the one
// active team it leads. It returns the caller's name in the team.
func myTeam(ctx context.Context, env *tool.Env, teams store.Teams) (store.Team, string, string) {
	if sc := scopeOf(env); sc.Team != "" {
		t, err := teams.GetTeam(ctx, sc.Team)
		if err != nil {
			return store.Team{}, "", fmt.Sprintf("Your team %s cannot be read: %v", sc.Team, err)
		}
		if !t.Active() {
			return store.Team{}, "", fmt.Sprintf("Team %s has been deleted.", t.Name)
		}
		return t, sc.Name, ""
	}
	led, err := Led(ctx, teams, sessionID(env))
	if err != nil {
		return store.Team{}, "", err.Error()
	}
	switch len(led) {
	case 0:
		return store.Team{}, "", "You are not in a team; create one with TeamCreate first."
	case 1:
		return led[0], store.LeadMailbox, ""
	}
	names := make([]string, len(led))
	for i, t := range led {
		names[i] = t.Name
	}
	return store.Team{}, "", fmt.Sprintf("You lead several teams (%s); delete the ones you are done with, one team at a time is supported.", strings.Join(names, ", "))
}

// Led returns the active teams whose lead is the session.
func Led(ctx context.Context, teams store.Teams, session string) ([]store.Team, error) {
	if session == "" {
		return nil, nil
	}
	all, err := teams.ListTeams(ctx)
	if err != nil {
		return nil, err
	}
	var out []store.Team
	for _, t := range all {
		if t.Active() && t.Lead == session {
			out = append(out, t)
		}
	}
	return out, nil
}

func memberNames(t store.Team) string {
	names := make([]string, len(t.Members))
	for i, m := range t.Members {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// Status renders the members' status, one a line.
func Status(t store.Team) string {
	var b strings.Builder
	for i, m := range t.Members {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "- %s", m.Name)
		if m.AgentType != "" {
			fmt.Fprintf(&b, " (%s)", m.AgentType)
		}
		fmt.Fprintf(&b, ": %s", m.Status)
		if m.Note != "" {
			fmt.Fprintf(&b, " — %s", firstLine(m.Note))
		}
	}
	return b.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return clip(s)
}

func clip(s string) string { return textutil.Truncate(s, 100) }

// Join adds member m to the caller's active team teamName and starts it on
// prompt through the [Runner] of env's services: the Agent tool's
// team_name. Only the team's lead (the session whose id is the team's
// Lead) adds members. Refusals (no store or runner, an unknown, deleted or
// foreign team, a used name, a full team, a start that fails) come back as
// error results; only a store failure is an error.
func Join(ctx context.Context, env *tool.Env, teamName string, m store.Member, prompt string) (*tool.Result, error) {
	teams, err := tool.Use[store.Teams](env)
	if err != nil {
		return tool.Errorf("Teams are not available in this session (%v).", err), nil
	}
	runner, err := tool.Use[Runner](env)
	if err != nil {
		return tool.Errorf("Teams need background agents, which this session cannot run (%v).", err), nil
	}
	if err := validName("name", m.Name); err != nil {
		return tool.ErrorResult(err), nil
	}
	if sc := scopeOf(env); sc.Team != "" {
		return tool.Errorf("You are member %s of team %s; only the lead adds members.", sc.Name, sc.Team), nil
	}
	t, err := teams.GetTeam(ctx, teamName)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return tool.Errorf("There is no team %s; create it with TeamCreate first.", teamName), nil
	case err != nil:
		return nil, err
	case !t.Active():
		return tool.Errorf("Team %s has been deleted.", t.Name), nil
	case t.Lead != sessionID(env):
		return tool.Errorf("Team %s is led by another session; only its lead adds members.", t.Name), nil
	}
	t, err = teams.AddMember(ctx, t.Name, m)
	if err != nil {
		if errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrNotFound) {
			return tool.ErrorResult(err), nil
		}
		return nil, err
	}
	m, _ = t.Member(m.Name)
	if err := runner.StartMember(ctx, env, t, m, prompt); err != nil {
		_ = teams.SetMemberStatus(context.WithoutCancel(ctx), t.Name, m.Name, store.MemberFailed, err.Error())
		return tool.Errorf("Member %s of team %s could not start: %v", m.Name, t.Name, err), nil
	}
	t, _ = teams.GetTeam(ctx, t.Name)
	r := tool.TextResult(fmt.Sprintf("%s joined team %s and is working in the background; it shares the team's task list %q and messages reach it with SendMessage (to %q). Its messages and status changes reach you at your next turns.\n%s",
		m.Name, t.Name, t.TaskList, m.Name, Status(t)))
	r.Structured = t
	return r, nil
}
