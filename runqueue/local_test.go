package runqueue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/runqueue"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type line struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

// script is a runner that emits its prompt's words as events; the word
// "ask" asks a permission (and emits the choice), "block" waits for ctx.
func script() runqueue.Runner {
	return runqueue.RunnerFunc(func(ctx context.Context, req runqueue.Request, x runqueue.Exec) (*runqueue.Result, error) {
		x.Started("sess-" + x.RunID)
		for _, w := range strings.Fields(req.Prompt) {
			switch w {
			case "ask":
				a, err := interaction.AskPermission(ctx, x.Channel, &interaction.PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":"ls"}`)})
				if err != nil {
					x.Emit(line{Type: "assistant", Text: "ask failed: " + err.Error()})
					continue
				}
				x.Emit(line{Type: "assistant", Text: string(a.Choice)})
			case "notify":
				a, err := interaction.Notify(ctx, x.Channel, &interaction.NotificationRequest{Title: "Done", Message: "ready", ToolUseID: "toolu_1"})
				if err != nil {
					x.Emit(line{Type: "assistant", Text: "notify failed: " + err.Error()})
					continue
				}
				x.Emit(line{Type: "assistant", Text: strings.Join(a.Delivered, ",")})
			case "block":
				<-ctx.Done()
				return nil, ctx.Err()
			case "fail":
				return &runqueue.Result{Subtype: "error_max_turns", IsError: true}, nil
			default:
				if err := x.Emit(line{Type: "assistant", Text: w}); err != nil {
					return nil, err
				}
			}
		}
		x.Emit(line{Type: "result", Text: "done"})
		return &runqueue.Result{Subtype: "success", Text: "done"}, nil
	})
}

func newLocal(t *testing.T, o runqueue.LocalOptions) *runqueue.Local {
	t.Helper()
	if o.Runner == nil {
		o.Runner = script()
	}
	l, err := runqueue.NewLocal(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		l.Shutdown(ctx)
	})
	return l
}

// collect reads a run's events to its end.
func collect(t *testing.T, e runqueue.Engine, id string, after int64) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []string
	want := after + 1
	for ev, err := range e.Events(ctx, id, after) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Seq != want {
			t.Fatalf("event seq %d, want %d", ev.Seq, want)
		}
		want++
		var l line
		json.Unmarshal(ev.Data, &l)
		if l.Type != ev.Type {
			t.Fatalf("event type %q, line type %q", ev.Type, l.Type)
		}
		out = append(out, ev.Type+":"+l.Text)
	}
	return out
}

func req(prompt string) runqueue.Request { return runqueue.Request{Prompt: prompt, Dir: "/tmp"} }

func TestLocalRun(t *testing.T) {
	l := newLocal(t, runqueue.LocalOptions{})
	ctx := context.Background()
	r, err := l.Start(ctx, req("hello world"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != runqueue.StatusRunning && r.Status != runqueue.StatusQueued {
		t.Fatalf("status %s", r.Status)
	}
	got := strings.Join(collect(t, l, r.ID, 0), " ")
	if got != "assistant:hello assistant:world result:done" {
		t.Fatalf("events %q", got)
	}
	// A late subscriber resumes after a sequence number.
	if got := strings.Join(collect(t, l, r.ID, 2), " "); got != "result:done" {
		t.Fatalf("resumed events %q", got)
	}
	r, err = l.Get(ctx, r.ID)
	if err != nil || r.Status != runqueue.StatusSucceeded || r.Result.Text != "done" || r.SessionID != "sess-"+r.ID || r.Events != 3 || r.EndedAt.IsZero() {
		t.Fatalf("run %+v, %v", r, err)
	}
}

func TestLocalValidate(t *testing.T) {
	l := newLocal(t, runqueue.LocalOptions{})
	for _, r := range []runqueue.Request{
		{Dir: "/tmp"},
		{Prompt: "x", Dir: "rel"},
		{Prompt: "x", Dir: "/tmp", Options: runqueue.Options{Mode: "yolo"}},
		{Prompt: "x", Dir: "/tmp", Origin: runqueue.Origin{Kind: "nowhere"}},
	} {
		if _, err := l.Start(context.Background(), r); !errors.Is(err, runqueue.ErrInvalid) {
			t.Errorf("Start(%+v) = %v, want ErrInvalid", r, err)
		}
	}
}

func TestLocalDuplicateKey(t *testing.T) {
	l := newLocal(t, runqueue.LocalOptions{})
	ctx := context.Background()
	rq := req("x")
	rq.Key = runqueue.FireKey("job1", time.Unix(1700000000, 0))
	a, err := l.Start(ctx, rq)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Start(ctx, rq)
	if !errors.Is(err, runqueue.ErrDuplicate) || b.ID != a.ID {
		t.Fatalf("second start: %v %v", b.ID, err)
	}
	runs, _ := l.List(ctx, runqueue.Filter{})
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
}

func TestLocalAsk(t *testing.T) {
	tests := []struct {
		name    string
		answer  interaction.Answer
		timeout time.Duration
		want    string
	}{
		{"answered", &interaction.PermissionAnswer{Choice: interaction.AllowOnce}, 0, "assistant:allow_once"},
		{"timeout", nil, time.Millisecond, "assistant:ask failed: interaction: nobody can answer: nobody answered within 1ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLocal(t, runqueue.LocalOptions{AskTimeout: tt.timeout})
			ctx := context.Background()
			r, _ := l.Start(ctx, req("ask"))
			var got []string
			for ev, err := range l.Events(ctx, r.ID, 0) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ev.Type)
				if ev.Type == "control_request" {
					var cr runqueue.ControlRequest
					json.Unmarshal(ev.Data, &cr)
					if cr.Request.Subtype != "can_use_tool" || cr.Request.ToolName != "Bash" || cr.RequestID == "" {
						t.Fatalf("control request %s", ev.Data)
					}
					if tt.answer == nil {
						continue
					}
					run, _ := l.Get(ctx, r.ID)
					if len(run.Asks) != 1 || run.Asks[0].ID != cr.RequestID {
						t.Fatalf("pending asks %+v", run.Asks)
					}
					// Wrong kind and unknown ids are refused.
					if err := l.Answer(ctx, r.ID, cr.RequestID, &interaction.TrustAnswer{}); !errors.Is(err, runqueue.ErrInvalid) {
						t.Fatalf("wrong kind: %v", err)
					}
					if err := l.Answer(ctx, r.ID, cr.RequestID, &interaction.PermissionAnswer{Choice: "maybe"}); !errors.Is(err, runqueue.ErrInvalid) {
						t.Fatalf("bad choice: %v", err)
					}
					if err := l.Answer(ctx, r.ID, "ask-99", tt.answer); !errors.Is(err, runqueue.ErrNotFound) {
						t.Fatalf("unknown ask: %v", err)
					}
					if err := l.Answer(ctx, r.ID, cr.RequestID, tt.answer); err != nil {
						t.Fatal(err)
					}
					if err := l.Answer(ctx, r.ID, cr.RequestID, tt.answer); !errors.Is(err, runqueue.ErrNotFound) {
						t.Fatalf("second answer: %v", err)
					}
				}
			}
			if strings.Join(got, " ") != "control_request system assistant result" {
				t.Fatalf("events %v", got)
			}
			all := collect(t, l, r.ID, 2)
			if all[0] != tt.want {
				t.Fatalf("got %q, want %q", all[0], tt.want)
			}
		})
	}
}

// TestLocalNotification: a notification is an event of the run, never a
// pending ask, and the run goes on at once.
func TestLocalNotification(t *testing.T) {
	l := newLocal(t, runqueue.LocalOptions{})
	ctx := context.Background()
	r, _ := l.Start(ctx, req("notify"))
	var got []string
	for ev, err := range l.Events(ctx, r.ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "system" {
			var n runqueue.Notification
			json.Unmarshal(ev.Data, &n)
			if n.Subtype != "notification" || n.Message != "ready" || n.Title != "Done" || n.ToolUseID != "toolu_1" {
				t.Fatalf("notification line %s", ev.Data)
			}
		}
		got = append(got, ev.Type)
	}
	if strings.Join(got, " ") != "system assistant result" {
		t.Fatalf("events %v", got)
	}
	if all := collect(t, l, r.ID, 1); all[0] != "assistant:stream" {
		t.Fatalf("got %q", all)
	}
	if run, _ := l.Get(ctx, r.ID); len(run.Asks) != 0 {
		t.Fatalf("pending asks %+v", run.Asks)
	}

	// LocalOptions.Notify sees it too (a webhook), with the run's id.
	var hooked []string
	l2 := newLocal(t, runqueue.LocalOptions{Notify: func(_ context.Context, id string, n *interaction.NotificationRequest) error {
		hooked = append(hooked, id+":"+n.Message)
		return nil
	}})
	r2, _ := l2.Start(ctx, req("notify"))
	if all := collect(t, l2, r2.ID, 1); all[0] != "assistant:stream,webhook" {
		t.Fatalf("got %q", all)
	}
	if len(hooked) != 1 || hooked[0] != r2.ID+":ready" {
		t.Fatalf("hook saw %q", hooked)
	}
}

func TestLocalCancel(t *testing.T) {
	l := newLocal(t, runqueue.LocalOptions{MaxRunning: 1})
	ctx := context.Background()
	a, _ := l.Start(ctx, req("one block"))
	b, _ := l.Start(ctx, req("two"))
	if b.Status != runqueue.StatusQueued {
		t.Fatalf("second run is %s, want queued", b.Status)
	}
	if err := l.Cancel(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := l.Cancel(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	collect(t, l, a.ID, 0)
	for _, id := range []string{a.ID, b.ID} {
		r, _ := l.Get(ctx, id)
		if r.Status != runqueue.StatusCancelled {
			t.Fatalf("run %s is %s", id, r.Status)
		}
		if err := l.Cancel(ctx, id); !errors.Is(err, runqueue.ErrEnded) {
			t.Fatalf("cancel ended: %v", err)
		}
	}
	if err := l.Cancel(ctx, "nope"); !errors.Is(err, runqueue.ErrNotFound) {
		t.Fatal(err)
	}
}

func TestLocalQueueAndList(t *testing.T) {
	l := newLocal(t, runqueue.LocalOptions{MaxRunning: 1})
	ctx := context.Background()
	var ids []string
	for _, p := range []string{"a", "fail", "c"} {
		r, err := l.Start(ctx, req(p))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	collect(t, l, ids[2], 0)
	runs, _ := l.List(ctx, runqueue.Filter{})
	if len(runs) != 3 || runs[0].ID != ids[2] {
		t.Fatalf("list %+v", runs)
	}
	failed, _ := l.List(ctx, runqueue.Filter{Status: []runqueue.Status{runqueue.StatusFailed}})
	if len(failed) != 1 || failed[0].ID != ids[1] {
		t.Fatalf("failed %+v", failed)
	}
	if one, _ := l.List(ctx, runqueue.Filter{Limit: 1}); len(one) != 1 {
		t.Fatalf("limit: %d", len(one))
	}
}

func TestLocalShutdown(t *testing.T) {
	l := newLocal(t, runqueue.LocalOptions{MaxRunning: 1})
	ctx := context.Background()
	a, _ := l.Start(ctx, req("block"))
	b, _ := l.Start(ctx, req("x"))
	sctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := l.Shutdown(sctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shutdown: %v", err)
	}
	for _, id := range []string{a.ID, b.ID} {
		if r, _ := l.Get(ctx, id); r.Status != runqueue.StatusCancelled {
			t.Fatalf("run %s is %s", id, r.Status)
		}
	}
	if _, err := l.Start(ctx, req("x")); !errors.Is(err, runqueue.ErrClosed) {
		t.Fatalf("start after shutdown: %v", err)
	}
}

func TestDecodeAnswer(t *testing.T) {
	a, err := runqueue.DecodeAnswer(interaction.KindPermission, []byte(`{"choice":"deny","message":"no"}`))
	if err != nil || a.(*interaction.PermissionAnswer).Message != "no" {
		t.Fatal(a, err)
	}
	for _, bad := range []string{``, `{"choise":"deny"}`, `[]`} {
		if _, err := runqueue.DecodeAnswer(interaction.KindPermission, []byte(bad)); !errors.Is(err, runqueue.ErrInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := runqueue.DecodeAnswer("nope", []byte(`{}`)); !errors.Is(err, runqueue.ErrInvalid) {
		t.Error(err)
	}
	ask := runqueue.Ask{ID: "ask-1", Kind: interaction.KindQuestion, Request: &interaction.QuestionRequest{Questions: []interaction.Question{{Question: "Q?"}}}}
	b, _ := json.Marshal(ask)
	var back runqueue.Ask
	if err := json.Unmarshal(b, &back); err != nil || back.Request.(*interaction.QuestionRequest).Questions[0].Question != "Q?" {
		t.Fatal(string(b), err)
	}
}

func TestLocalKeepEnded(t *testing.T) {
	l := newLocal(t, runqueue.LocalOptions{MaxRunning: 1, KeepEnded: 2})
	ctx := context.Background()
	var ids []string
	for i := range 5 {
		rq := req("x")
		rq.Key = fmt.Sprint("k", i)
		r, err := l.Start(ctx, rq)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
		collect(t, l, r.ID, 0)
	}
	runs, _ := l.List(ctx, runqueue.Filter{})
	if len(runs) != 2 || runs[0].ID != ids[4] || runs[1].ID != ids[3] {
		t.Fatalf("kept %+v", runs)
	}
	if _, err := l.Get(ctx, ids[0]); !errors.Is(err, runqueue.ErrNotFound) {
		t.Fatalf("evicted run: %v", err)
	}
}
