// Package notify holds the PushNotification tool and the ways a
// notification reaches a person outside the conversation.
//
// PushNotification sends an [interaction.NotificationRequest] through the
// session's interaction channel (tool.Use[interaction.Channel]): every
// front end that talks to the person decides how to deliver it — the
// terminal UI rings the bell, writes an OSC 9 notification for terminals
// that show one and raises an OS notification ([Desktop]); a line terminal
// rings and prints a line; gantry serve puts it in the run's event stream;
// a [Webhook] wrapped around any channel POSTs it as JSON. The channel
// answers at once with how it was delivered, and the tool tells the model.
// A channel that delivers no notifications (a headless run) makes the call
// an error result that says nobody could be told.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/tool"
)

// Name is the tool's name.
const Name = "PushNotification"

// MaxMessage bounds a notification's message, in characters; longer input
// is refused (a notification is a line or two, not a report).
const MaxMessage = 1000

// Input is the input of PushNotification.
type Input struct {
	Message string `json:"message" jsonschema:"What to tell the user, in a sentence or two (at most 1000 characters)."`
	Title   string `json:"title,omitempty" jsonschema:"Optional short heading (a few words)."`
}

const description = `Sends a notification to the user outside the conversation — a terminal bell and a desktop notification, or an event for the program that runs you — so they notice without watching the screen.

Use it when a long task is done, when you are blocked and need the user's decision, or when something needs their attention soon. Do not use it for routine progress: the user sees your replies. The result says how the notification was delivered, or that nobody could be told.`

// New returns the PushNotification tool.
func New() tool.Tool {
	return tool.Must(tool.New(Name, description,
		func(ctx context.Context, env *tool.Env, in Input) (*tool.Result, error) {
			ch, err := tool.Use[interaction.Channel](env)
			if err != nil {
				return tool.Errorf("Nobody can be notified in this session (no interaction channel): the notification was not delivered."), nil
			}
			a, err := interaction.Notify(ctx, ch, &interaction.NotificationRequest{
				Who:   interaction.Who{SessionID: env.SessionID},
				Title: strings.TrimSpace(in.Title), Message: strings.TrimSpace(in.Message), ToolUseID: env.ToolUseID,
			})
			switch {
			case errors.Is(err, interaction.ErrNobody):
				return tool.Errorf("Nobody can be notified in this session (%v): the notification was not delivered.", err), nil
			case err != nil:
				return nil, fmt.Errorf("notification: %w", err)
			}
			r := tool.TextResult(answerText(a))
			r.IsError = len(a.Delivered) == 0 && len(a.Errors) > 0
			r.Structured = a
			return r, nil
		},
		tool.WithTraits(tool.Traits{ConcurrencySafe: true, NonDestructive: true, Planning: true}),
		tool.WithDoc(tool.Doc{DisplayName: "Notify"}),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in Input) error {
			switch n := utf8.RuneCountInString(strings.TrimSpace(in.Message)); {
			case n == 0:
				return errors.New("message is empty")
			case n > MaxMessage:
				return fmt.Errorf("message has %d characters; at most %d", n, MaxMessage)
			}
			if utf8.RuneCountInString(in.Title) > 100 {
				return errors.New("title is longer than 100 characters")
			}
			return nil
		}),
		// Telling the person changes nothing they own.
		tool.PermissionFunc(func(context.Context, *tool.Env, Input) tool.PermissionResult {
			return tool.PermissionResult{Behavior: tool.Allow, Reason: "a notification only tells the user something"}
		}),
		tool.DescribeFunc(func(in Input) string {
			s := strings.Join(strings.Fields(in.Message), " ")
			if r := []rune(s); len(r) > 60 {
				s = string(r[:59]) + "…"
			}
			return "Notify: " + s
		}),
		tool.WithDefer(tool.Deferral{ShouldDefer: true, SearchHint: "notify the user push notification bell"}),
	))
}

func answerText(a *interaction.NotificationAnswer) string {
	var b strings.Builder
	if len(a.Delivered) > 0 {
		fmt.Fprintf(&b, "Notification delivered (%s).", strings.Join(a.Delivered, ", "))
	} else if len(a.Errors) == 0 {
		b.WriteString("Notification accepted; the user will see it when they look.")
	} else {
		b.WriteString("The notification was not delivered.")
	}
	if len(a.Errors) > 0 {
		fmt.Fprintf(&b, " Failed: %s.", strings.Join(a.Errors, "; "))
	}
	return b.String()
}

// Desktop raises an OS notification: notify-send on Linux and the BSDs,
// osascript on macOS. It returns an error when neither is available or the
// program fails; title and message are passed as arguments, never through
// a shell.
func Desktop(ctx context.Context, title, message string) error {
	if title == "" {
		title = "Gantry"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.CommandContext(ctx, "osascript", "-e", "on run argv\ndisplay notification (item 2 of argv) with title (item 1 of argv)\nend run", title, message)
	default:
		p, err := exec.LookPath("notify-send")
		if err != nil {
			return errors.New("no desktop notifier (notify-send) is installed")
		}
		cmd = exec.CommandContext(ctx, p, "--app-name=gantry", "--", title, message)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", cmd.Args[0], err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Webhook POSTs notifications as JSON to a URL the user configured. The
// zero Client is an http.Client with a 10 s timeout.
type Webhook struct {
	// URL receives the POST.
	URL string
	// Header is added to each request (an Authorization header, say).
	Header http.Header
	// Client sends the request; nil means a client with a 10 s timeout.
	Client *http.Client
	// Now returns the time stamped on the payload; nil means time.Now.
	Now func() time.Time
}

// Payload is the JSON body a [Webhook] posts.
type Payload struct {
	Type      string    `json:"type"` // "notification"
	Title     string    `json:"title,omitempty"`
	Message   string    `json:"message"`
	SessionID string    `json:"session_id,omitempty"`
	Agent     string    `json:"agent,omitempty"`
	ToolUseID string    `json:"tool_use_id,omitempty"`
	Time      time.Time `json:"time"`
}

// Send posts r; a status outside 2xx is an error.
func (w *Webhook) Send(ctx context.Context, r *interaction.NotificationRequest) error {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	body, err := json.Marshal(Payload{Type: "notification", Title: r.Title, Message: r.Message, SessionID: r.SessionID,
		Agent: r.Agent, ToolUseID: r.ToolUseID, Time: now().UTC()})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	for k, vs := range w.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	c := w.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook: %s answered %s", req.URL.Redacted(), resp.Status)
	}
	return nil
}

// Wrap returns a channel that posts notifications to the webhook and then
// passes them on to ch (the answers are merged: a notification is
// delivered if either delivered it); every other request goes to ch
// unchanged. A nil ch only posts.
func (w *Webhook) Wrap(ch interaction.Channel) interaction.Channel {
	return interaction.ChannelFunc(func(ctx context.Context, req interaction.Request) (interaction.Answer, error) {
		n, ok := req.(*interaction.NotificationRequest)
		if !ok {
			if ch == nil {
				return interaction.Nobody.Ask(ctx, req)
			}
			return ch.Ask(ctx, req)
		}
		a := &interaction.NotificationAnswer{}
		if err := w.Send(ctx, n); err != nil {
			a.Errors = append(a.Errors, err.Error())
		} else {
			a.Delivered = append(a.Delivered, "webhook")
		}
		if ch != nil {
			inner, err := interaction.Notify(ctx, ch, n)
			switch {
			case err == nil:
				a.Delivered = append(a.Delivered, inner.Delivered...)
				a.Errors = append(a.Errors, inner.Errors...)
			case !errors.Is(err, interaction.ErrNobody):
				a.Errors = append(a.Errors, err.Error())
			}
		}
		return a, nil
	})
}
