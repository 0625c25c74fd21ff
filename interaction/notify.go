package interaction

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/gantry-dev/gantry/internal/outbuf"
)

// NotificationRequest tells the person something without waiting for a
// decision: the PushNotification tool's message ("the build is green",
// "I need you to choose between two designs"). A channel delivers it the
// ways it can — a terminal bell and an OS notification in the terminal UI,
// an event in a run's stream under gantry serve, a webhook — and answers at
// once with how; it never waits for the person to read it.
type NotificationRequest struct {
	Who
	// Title is a short heading ("" lets the channel choose one).
	Title string `json:"title,omitempty"`
	// Message is the text for the person.
	Message string `json:"message"`
	// ToolUseID is the PushNotification call's id.
	ToolUseID string `json:"tool_use_id,omitempty"`
}

// Kind implements [Request].
func (*NotificationRequest) Kind() Kind { return KindNotification }

// NotificationAnswer answers a [NotificationRequest]: how it was delivered.
type NotificationAnswer struct {
	// Delivered names each way the notification went out ("terminal",
	// "desktop", "stream", "webhook"); empty means the channel took it but
	// could not tell the person now.
	Delivered []string `json:"delivered,omitempty"`
	// Errors are the ways that failed, one line each.
	Errors []string `json:"errors,omitempty"`
}

// Kind implements [Answer].
func (*NotificationAnswer) Kind() Kind { return KindNotification }

// Notify sends req through ch and returns how it was delivered. A channel
// that does not deliver notifications answers with an error wrapping
// [ErrNobody].
func Notify(ctx context.Context, ch Channel, req *NotificationRequest) (*NotificationAnswer, error) {
	return ask[*NotificationAnswer](ctx, ch, req)
}

// notifyTerminal rings the bell of a line terminal and writes the message,
// escaped, on one line.
func notifyTerminal(w io.Writer, r *NotificationRequest) (*NotificationAnswer, error) {
	title := r.Title
	if title == "" {
		title = "Notification"
	}
	msg := outbuf.EscapeDisplay(strings.Join(strings.Fields(r.Message), " "))
	if _, err := fmt.Fprintf(w, "\a[%s] %s\n", outbuf.EscapeDisplay(title), msg); err != nil {
		return nil, err
	}
	return &NotificationAnswer{Delivered: []string{"terminal"}}, nil
}
