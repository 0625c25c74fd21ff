package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gantry-dev/gantry/interaction"
)

// errPending is what the ask channel returns for a request that has no
// answer yet: the call is abandoned and its ask goes to the workflow.
var errPending = errors.New("durable: the answer is pending")

// askState holds the answers to one call's asks, in the order the call
// makes them, and the first ask beyond them.
type askState struct {
	answers []json.RawMessage
	n       int
	pending *Ask
}

type asksKey struct{}

func withAsks(ctx context.Context, st *askState) context.Context {
	return context.WithValue(ctx, asksKey{}, st)
}

// askChannel is the interaction channel of a run on a worker: it answers
// from the answers the workflow collected for the current call; a request
// beyond them becomes the call's pending ask (and the call is abandoned:
// the workflow runs it again once the answer is in). Outside a tool
// activity nobody can answer.
type askChannel struct{}

func (askChannel) Ask(ctx context.Context, req interaction.Request) (interaction.Answer, error) {
	st, _ := ctx.Value(asksKey{}).(*askState)
	if st == nil || req == nil {
		return nil, &interaction.NobodyError{Why: "nobody can answer outside a tool call of a durable run"}
	}
	if req.Kind() == interaction.KindNotification {
		// A notification is not a question: it must not park the call
		// as a pending ask. Durable runs have no channel to a person
		// yet, so the tool reports that nobody was told.
		return nil, &interaction.NobodyError{Why: "a durable run has no way to notify a person"}
	}
	i := st.n
	st.n++
	if i < len(st.answers) {
		return decodeAnswer(req.Kind(), st.answers[i])
	}
	if st.pending == nil {
		b, err := json.Marshal(req)
		if err != nil {
			return nil, fmt.Errorf("durable: encode the ask: %w", err)
		}
		st.pending = &Ask{Kind: req.Kind(), Request: b}
	}
	return nil, errPending
}

// newAnswer returns an empty answer of kind k.
func newAnswer(k interaction.Kind) (interaction.Answer, error) {
	switch k {
	case interaction.KindPermission:
		return &interaction.PermissionAnswer{}, nil
	case interaction.KindQuestion:
		return &interaction.QuestionAnswer{}, nil
	case interaction.KindPlan:
		return &interaction.PlanAnswer{}, nil
	case interaction.KindElicitation:
		return &interaction.ElicitationAnswer{}, nil
	case interaction.KindTrust:
		return &interaction.TrustAnswer{}, nil
	}
	return nil, fmt.Errorf("durable: unknown ask kind %q", k)
}

// decodeAnswer decodes an answer of kind k strictly (unknown fields are
// refused, so a typo does not silently become a default).
func decodeAnswer(k interaction.Kind, raw json.RawMessage) (interaction.Answer, error) {
	a, err := newAnswer(k)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(a); err != nil {
		return nil, fmt.Errorf("durable: the %s answer is not valid: %w", k, err)
	}
	return a, nil
}

// validAnswer checks an answer before the workflow accepts it.
func validAnswer(k interaction.Kind, raw json.RawMessage) error {
	a, err := decodeAnswer(k, raw)
	if err != nil {
		return err
	}
	switch v := a.(type) {
	case *interaction.PermissionAnswer:
		switch v.Choice {
		case interaction.AllowOnce, interaction.AllowSession, interaction.AllowAlways, interaction.Deny:
		default:
			return fmt.Errorf("unknown permission choice %q (want allow_once, allow_session, allow_always or deny)", v.Choice)
		}
		if len(v.UpdatedInput) > 0 && !json.Valid(v.UpdatedInput) {
			return errors.New("updated_input is not JSON")
		}
	case *interaction.QuestionAnswer:
		if len(v.Answers) == 0 {
			return errors.New("the answer has no answers")
		}
	}
	return nil
}
