package interaction

import (
	"context"
	"errors"
	"testing"

	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

func TestFuncsDispatch(t *testing.T) {
	ctx := context.Background()
	f := Funcs{
		Permission: func(context.Context, *PermissionRequest) (*PermissionAnswer, error) {
			return &PermissionAnswer{Choice: AllowOnce}, nil
		},
		Question: func(_ context.Context, r *QuestionRequest) (*QuestionAnswer, error) {
			return &QuestionAnswer{Answers: map[string]string{r.Questions[0].Question: "A"}}, nil
		},
	}
	if a, err := AskPermission(ctx, f, &PermissionRequest{ToolName: "Bash"}); err != nil || a.Choice != AllowOnce || !a.Allowed() {
		t.Errorf("permission: %+v %v", a, err)
	}
	q := &QuestionRequest{Questions: []Question{{Question: "Q?"}}}
	if a, err := AskQuestions(ctx, f, q); err != nil || a.Answers["Q?"] != "A" {
		t.Errorf("question: %+v %v", a, err)
	}
	// Kinds without a function, the zero Funcs, Nobody and a nil channel
	// have nobody to ask.
	for name, ch := range map[string]Channel{"missing func": f, "zero": Funcs{}, "nobody": Nobody, "nil": nil} {
		if _, err := ApprovePlan(ctx, ch, &PlanRequest{Plan: "p"}); !errors.Is(err, ErrNobody) {
			t.Errorf("%s: plan err %v, want ErrNobody", name, err)
		}
		if _, err := AskTrust(ctx, ch, &TrustRequest{Dir: "/x"}); !errors.Is(err, ErrNobody) {
			t.Errorf("%s: trust err %v, want ErrNobody", name, err)
		}
	}
	// A function returning a nil answer without an error is a bad channel,
	// not a panic.
	bad := Funcs{Trust: func(context.Context, *TrustRequest) (*TrustAnswer, error) { return nil, nil }}
	if _, err := AskTrust(ctx, bad, &TrustRequest{}); err == nil {
		t.Error("nil answer accepted")
	}
}

func TestAnswersAreChecked(t *testing.T) {
	ctx := context.Background()
	answer := func(a Answer) Channel {
		return ChannelFunc(func(context.Context, Request) (Answer, error) { return a, nil })
	}
	cases := []struct {
		name string
		ask  func(Channel) error
		ch   Channel
	}{
		{"wrong kind", func(ch Channel) error { _, err := AskPermission(ctx, ch, &PermissionRequest{}); return err }, answer(&PlanAnswer{})},
		{"unknown choice", func(ch Channel) error { _, err := AskPermission(ctx, ch, &PermissionRequest{}); return err }, answer(&PermissionAnswer{Choice: "maybe"})},
		{"policy scope", func(ch Channel) error { _, err := AskPermission(ctx, ch, &PermissionRequest{}); return err }, answer(&PermissionAnswer{Choice: AllowAlways, Scope: settings.ScopePolicy})},
		{"bad updated input", func(ch Channel) error { _, err := AskPermission(ctx, ch, &PermissionRequest{}); return err }, answer(&PermissionAnswer{Choice: AllowOnce, UpdatedInput: []byte("{")})},
		{"answer to a question not asked", func(ch Channel) error {
			_, err := AskQuestions(ctx, ch, &QuestionRequest{Questions: []Question{{Question: "Q?"}}})
			return err
		}, answer(&QuestionAnswer{Answers: map[string]string{"Other?": "x"}})},
		{"unknown mode", func(ch Channel) error { _, err := ApprovePlan(ctx, ch, &PlanRequest{}); return err }, answer(&PlanAnswer{Approved: true, Mode: "yolo"})},
		{"unknown action", func(ch Channel) error { _, err := Elicit(ctx, ch, &ElicitationRequest{}); return err }, answer(&ElicitationAnswer{Action: "ok"})},
		{"nil answer", func(ch Channel) error { _, err := AskTrust(ctx, ch, &TrustRequest{}); return err }, answer(nil)},
	}
	for _, tc := range cases {
		if err := tc.ask(tc.ch); err == nil || errors.Is(err, ErrNobody) {
			t.Errorf("%s: err %v, want a bad-answer error", tc.name, err)
		}
	}
	if a, err := ApprovePlan(ctx, answer(&PlanAnswer{Approved: true, Mode: tool.ModeAcceptEdits}), &PlanRequest{}); err != nil || a.Mode != tool.ModeAcceptEdits {
		t.Errorf("valid plan answer: %+v %v", a, err)
	}
	if a, err := Elicit(ctx, answer(&ElicitationAnswer{Action: ElicitAccept, Content: map[string]any{"x": 1}}), &ElicitationRequest{}); err != nil || a.Content["x"] != 1 {
		t.Errorf("valid elicitation answer: %+v %v", a, err)
	}
}

func TestCancelledContextIsNotAsked(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	asked := false
	ch := ChannelFunc(func(context.Context, Request) (Answer, error) {
		asked = true
		return &TrustAnswer{Trust: true}, nil
	})
	if _, err := AskTrust(ctx, ch, &TrustRequest{}); !errors.Is(err, context.Canceled) || asked {
		t.Errorf("err %v asked %v", err, asked)
	}
}

func TestLabel(t *testing.T) {
	var got []Who
	ch := Funcs{
		Permission: func(_ context.Context, r *PermissionRequest) (*PermissionAnswer, error) {
			got = append(got, r.Who)
			return &PermissionAnswer{Choice: AllowOnce}, nil
		},
		Question: func(_ context.Context, r *QuestionRequest) (*QuestionAnswer, error) {
			got = append(got, r.Who)
			return &QuestionAnswer{}, nil
		},
	}
	who := Who{SessionID: "child", Agent: "Explore", ParentToolUseID: "toolu_9"}
	l := Label(ch, who)
	orig := &PermissionRequest{ToolName: "Bash", Who: Who{SessionID: "x"}}
	if _, err := AskPermission(context.Background(), l, orig); err != nil {
		t.Fatal(err)
	}
	if orig.Agent != "" {
		t.Error("the request was changed")
	}
	// A request that names its agent (a grandchild's) keeps it.
	nested := &QuestionRequest{Who: Who{SessionID: "g", Agent: "Plan", ParentToolUseID: "toolu_10"}}
	if _, err := AskQuestions(context.Background(), l, nested); err != nil {
		t.Fatal(err)
	}
	if got[0] != who || got[1] != nested.Who {
		t.Errorf("labels %+v", got)
	}
	if Label(nil, who) != nil {
		t.Error("a nil channel stays nil (nobody)")
	}
}
