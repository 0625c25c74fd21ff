package team

import (
	"context"
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

// MaxDelivered bounds how many messages one turn boundary delivers from a
// mailbox; the rest come at the next one.
const MaxDelivered = 50

// Inbox delivers an agent's team messages at its turn boundaries: it is an
// agent.Reminder. A member (an agent whose [store.Scope] names a team) gets
// its own mailbox; a lead gets the lead mailbox of every active team it
// leads. Messages are acknowledged only once the agent has put them in its
// conversation, so each is delivered once, in order. The zero value is
// ready to use.
type Inbox struct{}

// Mailboxes returns the mailboxes an agent reads.
func Mailboxes(ctx context.Context, env *tool.Env) ([]string, error) {
	if sc := scopeOf(env); sc.Team != "" {
		return []string{store.MailboxName(sc.Team, sc.Name)}, nil
	}
	teams, err := tool.Use[store.Teams](env)
	if err != nil {
		return nil, nil
	}
	if l, ok := teams.(interface{ Opened() bool }); ok && !l.Opened() {
		return nil, nil // nothing was stored in this process: no team to lead
	}
	led, err := Led(ctx, teams, sessionID(env))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range led {
		out = append(out, store.MailboxName(t.Name, store.LeadMailbox))
	}
	return out, nil
}

// Remind returns the pending messages as text and the ack that marks them
// delivered.
func (Inbox) Remind(ctx context.Context, env *tool.Env) (string, func(), error) {
	names, err := Mailboxes(ctx, env)
	if err != nil || len(names) == 0 {
		return "", nil, err
	}
	boxes, err := tool.Use[store.Mailboxes](env)
	if err != nil {
		return "", nil, nil
	}
	var b strings.Builder
	acks := map[string]int64{}
	for _, name := range names {
		msgs, err := boxes.Pending(ctx, name, MaxDelivered)
		if err != nil {
			return "", nil, err
		}
		for _, m := range msgs {
			b.WriteString(Format(m))
			acks[name] = m.Seq
		}
	}
	if len(acks) == 0 {
		return "", nil, nil
	}
	ack := func() {
		for name, seq := range acks {
			_ = boxes.Ack(context.WithoutCancel(ctx), name, seq)
		}
	}
	return strings.TrimSpace(b.String()), ack, nil
}

// Format renders one delivered message for the model.
func Format(m store.Message) string {
	team, _, _ := strings.Cut(strings.TrimPrefix(m.Mailbox, "team/"), "/")
	return fmt.Sprintf("<team-message team=%q from=%q>\n%s\n</team-message>\n", team, m.From, m.Text)
}
