package interaction

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestNotify(t *testing.T) {
	ctx := context.Background()
	req := &NotificationRequest{Title: "Build", Message: "green\x1b]0;x\x07 now\nall"}

	// A line terminal rings and writes one escaped line, also while a
	// question holds it (a notification never waits for one).
	var out strings.Builder
	term := NewTerminal(strings.NewReader(""), &out)
	term.ask.Lock()
	a, err := Notify(ctx, term, req)
	term.ask.Unlock()
	if err != nil || len(a.Delivered) != 1 || a.Delivered[0] != "terminal" {
		t.Fatalf("%+v %v", a, err)
	}
	if got := out.String(); !strings.HasPrefix(got, "\a[Build] green") || strings.Count(got, "\n") != 1 || strings.ContainsRune(got, 0x1b) {
		t.Errorf("terminal wrote %q", got)
	}

	// Channels without notifications say nobody is there.
	for _, ch := range []Channel{Nobody, Funcs{}, nil} {
		if _, err := Notify(ctx, ch, req); !errors.Is(err, ErrNobody) {
			t.Errorf("%T: %v, want ErrNobody", ch, err)
		}
	}

	// Funcs delivers, and Label marks the subagent that notifies.
	var got *NotificationRequest
	ch := Label(Funcs{Notification: func(_ context.Context, r *NotificationRequest) (*NotificationAnswer, error) {
		got = r
		return &NotificationAnswer{Delivered: []string{"stream"}}, nil
	}}, Who{Agent: "reviewer", ParentToolUseID: "toolu_1"})
	if a, err := Notify(ctx, ch, req); err != nil || a.Delivered[0] != "stream" {
		t.Fatalf("%+v %v", a, err)
	}
	if got.Agent != "reviewer" || got.ParentToolUseID != "toolu_1" || req.Agent != "" {
		t.Errorf("label: %+v (request changed: %+v)", got.Who, req.Who)
	}
}
