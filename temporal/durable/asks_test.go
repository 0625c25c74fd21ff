package durable

import (
	"context"
	"errors"
	"testing"

	"github.com/gantry-dev/gantry/interaction"
)

// A notification inside a tool call is not parked as a pending ask (the
// run would wait for an answer nobody is asked for); a question is.
func TestAskChannelNotificationIsNotAnAsk(t *testing.T) {
	st := &askState{}
	ctx := withAsks(context.Background(), st)
	_, err := askChannel{}.Ask(ctx, &interaction.NotificationRequest{Message: "done"})
	var nobody *interaction.NobodyError
	if !errors.As(err, &nobody) {
		t.Fatalf("notification: err = %v, want a NobodyError", err)
	}
	if st.pending != nil {
		t.Fatalf("notification parked as an ask: %+v", st.pending)
	}
	_, err = askChannel{}.Ask(ctx, &interaction.QuestionRequest{Questions: []interaction.Question{{Question: "which?"}}})
	if !errors.Is(err, errPending) || st.pending == nil || st.pending.Kind != interaction.KindQuestion {
		t.Fatalf("question: err = %v, pending %+v", err, st.pending)
	}
}
