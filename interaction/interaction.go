// Package interaction is the one channel through which Gantry asks a person
// to decide something: whether a tool call may run (once, for the session,
// always), the answers to a model's questions, whether a plan is approved,
// what to put in an MCP server's elicitation form, and whether a folder is
// trusted.
//
// A [Channel] has one method, [Channel.Ask], that takes a [Request] and
// returns the matching [Answer]. The request kinds are [*PermissionRequest],
// [*QuestionRequest], [*PlanRequest], [*ElicitationRequest],
// [*TrustRequest] and [*NotificationRequest] (nothing to decide: the
// person is told something, the channel answers at once); their answers
// are [*PermissionAnswer], [*QuestionAnswer], [*PlanAnswer],
// [*ElicitationAnswer], [*TrustAnswer] and [*NotificationAnswer]. The typed
// helpers ([AskPermission], [AskQuestions], [ApprovePlan], [Elicit],
// [AskTrust], [Notify]) check the pairing.
//
// Implementations: [Funcs] (one function per kind, for SDK users and
// policies), [Terminal] (line prompts on a terminal), [Nobody] (headless: every
// request is [ErrNobody]); package mcpserve answers through MCP elicitation
// and [PromptTool] through an MCP tool (the CLI's --permission-prompt-tool).
// A full-screen UI implements Ask by turning the request into a UI event and
// waiting for the person's answer or ctx — see the contract on [Channel].
//
// Package interaction imports nothing of Gantry but tool and settings, so
// tools may use a Channel from their environment:
// tool.Use[interaction.Channel](env).
package interaction

import (
	"context"
	"errors"
	"fmt"
)

// ErrNobody is returned (wrapped) by a [Channel] that has nobody to ask:
// a headless run, a client without elicitation, a request kind the channel
// does not handle. Callers turn it into a clear result ("nobody can approve
// this call"), never a hang.
var ErrNobody = errors.New("interaction: nobody can answer")

// NobodyError is an [ErrNobody] that says why nobody can answer, in words
// meant for the model ("this MCP client cannot ask its user …"). It matches
// ErrNobody with errors.Is.
type NobodyError struct {
	Why string
}

func (e *NobodyError) Error() string { return "interaction: nobody can answer: " + e.Why }

// Is makes errors.Is(err, ErrNobody) true.
func (e *NobodyError) Is(target error) bool { return target == ErrNobody }

// Kind names a request kind.
type Kind string

// The request kinds.
const (
	KindPermission  Kind = "permission"
	KindQuestion    Kind = "question"
	KindPlan        Kind = "plan"
	KindElicitation Kind = "elicitation"
	KindTrust       Kind = "trust"
	// KindNotification tells the person something; nothing is decided
	// and the channel answers at once ([NotificationRequest]).
	KindNotification Kind = "notification"
)

// Request is one thing a person is asked to decide. The concrete types are
// the pointer types of this package named *Request; switch on them.
type Request interface {
	Kind() Kind
}

// Answer is a person's answer; its Kind is the request's.
type Answer interface {
	Kind() Kind
}

// Channel asks a person (or a policy standing in for one).
//
// Contract for implementations:
//   - Ask returns the answer type of the request's kind (a *PermissionAnswer
//     for a *PermissionRequest, …), or an error. A request kind the channel
//     does not handle returns an error wrapping [ErrNobody].
//   - Ask blocks until the person answers or ctx ends; on ctx's end it
//     returns ctx.Err() promptly (a person who walked away must not hang the
//     agent). Nothing else cancels a request.
//   - Ask may be called from several goroutines at once (a parent agent and
//     its subagents, an MCP elicitation while a tool call waits); an
//     implementation with one person serialises the requests itself.
//   - Text in a request comes from the model, tools or MCP servers: show it
//     escaped (control characters and invisible code points visible), never
//     as terminal control sequences.
//   - A request must not be changed; the answer belongs to the caller.
type Channel interface {
	Ask(ctx context.Context, req Request) (Answer, error)
}

// ChannelFunc adapts a function to [Channel].
type ChannelFunc func(ctx context.Context, req Request) (Answer, error)

// Ask implements [Channel].
func (f ChannelFunc) Ask(ctx context.Context, req Request) (Answer, error) { return f(ctx, req) }

// Nobody is the channel of a headless run: every request fails with
// [ErrNobody].
var Nobody Channel = ChannelFunc(func(_ context.Context, req Request) (Answer, error) {
	return nil, fmt.Errorf("%w (%s)", ErrNobody, req.Kind())
})

// Funcs is a [Channel] made of one function per request kind. A nil
// function answers its kind with [ErrNobody]. The zero value is [Nobody].
type Funcs struct {
	Permission  func(ctx context.Context, req *PermissionRequest) (*PermissionAnswer, error)
	Question    func(ctx context.Context, req *QuestionRequest) (*QuestionAnswer, error)
	Plan        func(ctx context.Context, req *PlanRequest) (*PlanAnswer, error)
	Elicitation func(ctx context.Context, req *ElicitationRequest) (*ElicitationAnswer, error)
	Trust       func(ctx context.Context, req *TrustRequest) (*TrustAnswer, error)
	// Notification delivers a notification and says how.
	Notification func(ctx context.Context, req *NotificationRequest) (*NotificationAnswer, error)
}

// Ask implements [Channel].
func (f Funcs) Ask(ctx context.Context, req Request) (Answer, error) {
	switch r := req.(type) {
	case *PermissionRequest:
		if f.Permission != nil {
			return nilAnswer(f.Permission(ctx, r))
		}
	case *QuestionRequest:
		if f.Question != nil {
			return nilAnswer(f.Question(ctx, r))
		}
	case *PlanRequest:
		if f.Plan != nil {
			return nilAnswer(f.Plan(ctx, r))
		}
	case *ElicitationRequest:
		if f.Elicitation != nil {
			return nilAnswer(f.Elicitation(ctx, r))
		}
	case *TrustRequest:
		if f.Trust != nil {
			return nilAnswer(f.Trust(ctx, r))
		}
	case *NotificationRequest:
		if f.Notification != nil {
			return nilAnswer(f.Notification(ctx, r))
		}
	case nil:
		return nil, errors.New("interaction: nil request")
	}
	return nil, fmt.Errorf("%w (%s)", ErrNobody, req.Kind())
}

// nilAnswer keeps a typed nil answer from becoming a non-nil interface.
func nilAnswer[A interface {
	Answer
	comparable
}](a A, err error) (Answer, error) {
	var zero A
	if err != nil || a == zero {
		return nil, err
	}
	return a, nil
}

// ask sends req to ch and checks the answer's type. A nil channel is
// [Nobody].
func ask[A Answer](ctx context.Context, ch Channel, req Request) (A, error) {
	var zero A
	if ch == nil {
		ch = Nobody
	}
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	ans, err := ch.Ask(ctx, req)
	if err != nil {
		return zero, err
	}
	a, ok := ans.(A)
	if !ok || ans == nil {
		return zero, fmt.Errorf("interaction: the channel answered a %s request with %T", req.Kind(), ans)
	}
	return a, nil
}

// AskPermission asks whether a tool call may run.
func AskPermission(ctx context.Context, ch Channel, req *PermissionRequest) (*PermissionAnswer, error) {
	a, err := ask[*PermissionAnswer](ctx, ch, req)
	if err != nil {
		return nil, err
	}
	if err := a.validate(); err != nil {
		return nil, err
	}
	return a, nil
}

// AskQuestions asks the model's questions. The answer is checked against
// the request: every answer's key is one of the questions.
func AskQuestions(ctx context.Context, ch Channel, req *QuestionRequest) (*QuestionAnswer, error) {
	a, err := ask[*QuestionAnswer](ctx, ch, req)
	if err != nil {
		return nil, err
	}
	for q := range a.Answers {
		if !req.has(q) {
			return nil, fmt.Errorf("interaction: the answer names a question that was not asked: %q", q)
		}
	}
	return a, nil
}

// ApprovePlan asks for approval of a plan.
func ApprovePlan(ctx context.Context, ch Channel, req *PlanRequest) (*PlanAnswer, error) {
	a, err := ask[*PlanAnswer](ctx, ch, req)
	if err != nil {
		return nil, err
	}
	if a.Mode != "" && !a.Mode.Valid() {
		return nil, fmt.Errorf("interaction: plan answer names unknown mode %q", a.Mode)
	}
	return a, nil
}

// Elicit asks a person to fill an MCP server's elicitation form.
func Elicit(ctx context.Context, ch Channel, req *ElicitationRequest) (*ElicitationAnswer, error) {
	a, err := ask[*ElicitationAnswer](ctx, ch, req)
	if err != nil {
		return nil, err
	}
	switch a.Action {
	case ElicitAccept, ElicitDecline, ElicitCancel:
	default:
		return nil, fmt.Errorf("interaction: unknown elicitation action %q", a.Action)
	}
	return a, nil
}

// AskTrust asks whether a folder is trusted.
func AskTrust(ctx context.Context, ch Channel, req *TrustRequest) (*TrustAnswer, error) {
	return ask[*TrustAnswer](ctx, ch, req)
}

// Label returns a channel that passes requests to ch with who filled in
// where the request names no agent of its own: how a subagent's requests
// (its tools' questions, its permission asks) reach the same person marked
// with the subagent that asks. The request is copied, never changed.
func Label(ch Channel, who Who) Channel {
	if ch == nil {
		return nil
	}
	return ChannelFunc(func(ctx context.Context, req Request) (Answer, error) {
		fill := func(w *Who) {
			if w.Agent == "" {
				w.Agent, w.ParentToolUseID = who.Agent, who.ParentToolUseID
				if w.SessionID == "" || who.SessionID != "" {
					w.SessionID = who.SessionID
				}
			}
		}
		switch r := req.(type) {
		case *PermissionRequest:
			req = relabel(r, fill)
		case *QuestionRequest:
			req = relabel(r, fill)
		case *PlanRequest:
			req = relabel(r, fill)
		case *ElicitationRequest:
			req = relabel(r, fill)
		case *NotificationRequest:
			req = relabel(r, fill)
		}
		return ch.Ask(ctx, req)
	})
}

// asker gives the Who of a request that embeds one.
func (w *Who) asker() *Who { return w }

// relabel returns a copy of r with fill applied to its Who.
func relabel[T any](r *T, fill func(*Who)) Request {
	c := *r
	fill(any(&c).(interface{ asker() *Who }).asker())
	return any(&c).(Request)
}
