package tui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"

	"github.com/gantry-dev/gantry/builtin/notify"
	"github.com/gantry-dev/gantry/interaction"
)

// bus carries messages from other goroutines (the agent's run, the
// interaction channel, session opening) into the UI's event loop. send
// returns false once the UI has ended.
type bus struct {
	mu   sync.Mutex
	post func(tea.Msg) // the program's Send (a test's channel)
	done chan struct{}
	once sync.Once
}

func newBus(post func(tea.Msg)) *bus { return &bus{post: post, done: make(chan struct{})} }

func (b *bus) send(m tea.Msg) bool {
	select {
	case <-b.done:
		return false
	default:
	}
	b.mu.Lock()
	post := b.post
	b.mu.Unlock()
	if post == nil {
		return false
	}
	post(m)
	select {
	case <-b.done:
		return false
	default:
		return true
	}
}

func (b *bus) setPost(post func(tea.Msg)) {
	b.mu.Lock()
	b.post = post
	b.mu.Unlock()
}

// close marks the UI ended: later sends fail and waiting asks return.
func (b *bus) close() { b.once.Do(func() { close(b.done) }) }

// pending is one request waiting for the person.
type pending struct {
	id    int64
	req   interaction.Request
	reply chan result
}

type result struct {
	ans interaction.Answer
	err error
}

// askMsg brings a request into the UI; askGoneMsg says its asker stopped
// waiting (its ctx ended), so its dialog goes away.
type askMsg struct{ p *pending }
type askGoneMsg struct{ id int64 }

// errClosed is the reason given when the UI has ended.
var errClosed = &interaction.NobodyError{Why: "the terminal UI was closed before the user answered"}

// channel is the UI's [interaction.Channel]: each request becomes a dialog
// in the UI; Ask waits for the person's answer, the end of ctx (the dialog
// is then withdrawn) or the end of the UI.
type channel struct {
	bus  *bus
	next atomic.Int64
	// desktop raises an OS notification; nil means notify.Desktop.
	desktop func(ctx context.Context, title, message string) error
}

// notifyMsg brings a notification into the UI: the bell, an OSC 9
// notification and a line in the transcript.
type notifyMsg struct {
	r *interaction.NotificationRequest
}

// notify delivers a notification without a dialog and answers at once.
func (c *channel) notify(ctx context.Context, r *interaction.NotificationRequest) (interaction.Answer, error) {
	if !c.bus.send(notifyMsg{r}) {
		return nil, errClosed
	}
	a := &interaction.NotificationAnswer{Delivered: []string{"terminal"}}
	desktop := c.desktop
	if desktop == nil {
		desktop = notify.Desktop
	}
	if err := desktop(ctx, r.Title, r.Message); err == nil {
		a.Delivered = append(a.Delivered, "desktop")
	}
	// No desktop notifier is no failure: the terminal told the person.
	return a, nil
}

// Ask implements [interaction.Channel].
func (c *channel) Ask(ctx context.Context, req interaction.Request) (interaction.Answer, error) {
	switch r := req.(type) {
	case *interaction.NotificationRequest:
		return c.notify(ctx, r)
	case *interaction.PermissionRequest, *interaction.QuestionRequest, *interaction.PlanRequest,
		*interaction.ElicitationRequest, *interaction.TrustRequest:
	case nil:
		return nil, errors.New("tui: nil request")
	default:
		return nil, fmt.Errorf("%w (%s)", interaction.ErrNobody, req.Kind())
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := &pending{id: c.next.Add(1), req: req, reply: make(chan result, 1)}
	if !c.bus.send(askMsg{p}) {
		return nil, errClosed
	}
	select {
	case r := <-p.reply:
		return r.ans, r.err
	case <-ctx.Done():
		c.bus.send(askGoneMsg{p.id})
		return nil, ctx.Err()
	case <-c.bus.done:
		return nil, errClosed
	}
}
