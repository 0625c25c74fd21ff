package executor

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Purpose-built test tools.

type noInput struct{}

type sleepIn struct {
	MS int    `json:"ms,omitempty"`
	ID string `json:"id,omitempty"`
}

type echoIn struct {
	Text  string         `json:"text"`
	Flag  bool           `json:"flag,omitempty"`
	Count int            `json:"count,omitempty"`
	Ratio float64        `json:"ratio,omitempty"`
	Opts  *echoOpts      `json:"opts,omitempty"`
	Tags  []string       `json:"tags,omitempty"`
	Meta  map[string]int `json:"meta,omitempty"`
	Limit *int           `json:"limit,omitempty"`
}

type echoOpts struct {
	Deep  bool `json:"deep"`
	Level int  `json:"level,omitempty"`
}

// probe records how many calls run at once.
type probe struct {
	mu      sync.Mutex
	cur     int
	max     int
	started []string
}

func (p *probe) enter(id string) {
	p.mu.Lock()
	p.cur++
	p.max = max(p.max, p.cur)
	p.started = append(p.started, id)
	p.mu.Unlock()
}

func (p *probe) leave() {
	p.mu.Lock()
	p.cur--
	p.mu.Unlock()
}

func (p *probe) maxSeen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.max
}

type kit struct {
	probe   *probe
	release chan struct{} // closed to let "gate" calls finish
	gateIn  chan string   // receives ids of started "gate" calls
	ignored atomic.Int32
	tools   []tool.Tool
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func newKit(t testing.TB) *kit {
	t.Helper()
	k := &kit{probe: &probe{}, release: make(chan struct{}), gateIn: make(chan string, 100)}
	add := func(tl *tool.FuncTool, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		k.tools = append(k.tools, tl)
	}
	add(tool.NewNoInput("Noop", "does nothing", func(ctx context.Context, env *tool.Env) (*tool.Result, error) {
		return tool.TextResult("ok"), nil
	}, tool.ReadOnly()))
	add(tool.NewText("Echo", "echoes its input", func(ctx context.Context, env *tool.Env, in echoIn) (string, error) {
		b, _ := json.Marshal(in)
		return string(b), nil
	}, tool.ReadOnly(), tool.WithAliases("Say")))
	add(tool.NewText("Sleep", "sleeps ms, read-only", func(ctx context.Context, env *tool.Env, in sleepIn) (string, error) {
		k.probe.enter(in.ID)
		defer k.probe.leave()
		if err := sleepCtx(ctx, time.Duration(in.MS)*time.Millisecond); err != nil {
			return "", err
		}
		return "slept " + in.ID, nil
	}, tool.ReadOnly()))
	add(tool.NewText("Gate", "read-only; waits for the test to release it", func(ctx context.Context, env *tool.Env, in sleepIn) (string, error) {
		k.probe.enter(in.ID)
		defer k.probe.leave()
		k.gateIn <- in.ID
		select {
		case <-k.release:
			return "released " + in.ID, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, tool.ReadOnly()))
	add(tool.NewText("Store", "writes (not concurrency-safe)", func(ctx context.Context, env *tool.Env, in sleepIn) (string, error) {
		k.probe.enter(in.ID)
		defer k.probe.leave()
		if err := sleepCtx(ctx, time.Duration(in.MS)*time.Millisecond); err != nil {
			return "", err
		}
		return "wrote " + in.ID + " in " + env.WorkDir, nil
	}))
	add(tool.New("Cd", "changes the working directory", func(ctx context.Context, env *tool.Env, in sleepIn) (*tool.Result, error) {
		r := tool.TextResult("cd " + in.ID + " from " + env.WorkDir)
		r.ContextModifier = func(e *tool.Env) { e.WorkDir = e.WorkDir + "/" + in.ID }
		return r, nil
	}))
	add(tool.NewText("Fail", "fails; cancels siblings", func(ctx context.Context, env *tool.Env, in sleepIn) (string, error) {
		_ = sleepCtx(ctx, time.Duration(in.MS)*time.Millisecond)
		return "", errors.New("exit status 1 at " + in.ID)
	}, tool.ReadOnly(), tool.CancelSiblingsOnError()))
	add(tool.NewText("Boom", "panics", func(ctx context.Context, env *tool.Env, in noInput) (string, error) {
		panic("kaboom 42")
	}, tool.ReadOnly()))
	add(tool.NewText("Huge", "huge output", func(ctx context.Context, env *tool.Env, in sleepIn) (string, error) {
		var b strings.Builder
		for i := 0; b.Len() < in.MS; i++ {
			b.WriteString("line ")
			b.WriteString(strings.Repeat("x", i%50))
			b.WriteByte('\n')
		}
		return b.String(), nil
	}, tool.ReadOnly()))
	add(tool.New("Picture", "huge text and an image", func(ctx context.Context, env *tool.Env, in noInput) (*tool.Result, error) {
		return &tool.Result{Content: []tool.Content{tool.Text(strings.Repeat("abc\n", 20000)), tool.Image([]byte{1, 2, 3}, "image/png")}}, nil
	}, tool.ReadOnly()))
	add(tool.NewText("Stubborn", "ignores cancellation", func(ctx context.Context, env *tool.Env, in sleepIn) (string, error) {
		time.Sleep(time.Duration(in.MS) * time.Millisecond)
		k.ignored.Add(1)
		return "done anyway", nil
	}, tool.ReadOnly()))
	add(tool.NewText("SlowCancel", "slow to cancel", func(ctx context.Context, env *tool.Env, in sleepIn) (string, error) {
		<-ctx.Done()
		time.Sleep(time.Duration(in.MS) * time.Millisecond)
		return "", ctx.Err()
	}, tool.ReadOnly()))
	add(tool.NewText("Block", "interrupt=block, not safe", func(ctx context.Context, env *tool.Env, in sleepIn) (string, error) {
		if err := sleepCtx(ctx, time.Duration(in.MS)*time.Millisecond); err != nil {
			return "", err
		}
		return "block finished", nil
	}, tool.WithInterrupt(tool.InterruptBlock)))
	add(tool.NewText("Timed", "per-call timeout in ms", func(ctx context.Context, env *tool.Env, in sleepIn) (string, error) {
		dl, _ := ctx.Deadline()
		if err := sleepCtx(ctx, time.Duration(in.MS)*time.Millisecond); err != nil {
			return "", err
		}
		return "deadline in " + time.Until(dl).Round(time.Second).String(), nil
	}, tool.ReadOnly(), tool.WithTimeout(time.Minute), tool.WithMaxTimeout(3*time.Minute),
		tool.TimeoutFunc(func(in sleepIn) time.Duration {
			if in.ID == "" {
				return 0
			}
			d, _ := time.ParseDuration(in.ID)
			return d
		})))
	add(tool.NewText("Progress", "reports progress", func(ctx context.Context, env *tool.Env, in noInput) (string, error) {
		env.ReportProgress("half", 50)
		return "done", nil
	}, tool.ReadOnly()))
	add(tool.NewText("Checked", "its own input check and permission view", func(ctx context.Context, env *tool.Env, in echoIn) (string, error) {
		return "checked " + in.Text, nil
	}, tool.ReadOnly(),
		tool.ValidateFunc(func(ctx context.Context, env *tool.Env, in echoIn) error {
			if strings.HasPrefix(in.Text, "bad") {
				return errors.New("text must not start with bad")
			}
			return nil
		}),
		tool.PermissionFunc(func(ctx context.Context, env *tool.Env, in echoIn) tool.PermissionResult {
			if in.Text == "secret" {
				return tool.PermissionResult{Behavior: tool.Deny, Reason: "secrets are off limits"}
			}
			return tool.PermissionResult{}
		})))
	return k
}

func (k *kit) resolver(t testing.TB) *MapResolver {
	t.Helper()
	r, err := NewMapResolver(k.tools...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func allowAll() permission.Decider {
	return permission.DeciderFunc(func(ctx context.Context, req *permission.Request) (permission.Decision, error) {
		return permission.Decision{Behavior: tool.Allow, Source: "test"}, nil
	})
}

func call(id, name, input string) Call {
	return Call{ID: id, Name: name, Input: json.RawMessage(input)}
}

func session() *SharedEnv {
	return NewSharedEnv(&tool.Env{WorkDir: "/w", SessionID: "s1", Mode: tool.ModeDefault})
}

func run(t testing.TB, e *Executor, calls ...Call) *Batch {
	t.Helper()
	b, err := e.Run(context.Background(), session(), calls)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Outcomes) != len(calls) {
		t.Fatalf("got %d outcomes for %d calls", len(b.Outcomes), len(calls))
	}
	for i, o := range b.Outcomes {
		if o.ID != calls[i].ID {
			t.Fatalf("outcome %d has id %q, want %q (model order)", i, o.ID, calls[i].ID)
		}
		if o.Result == nil {
			t.Fatalf("outcome %d has no result", i)
		}
	}
	return b
}

func text(o *Outcome) string { return o.Result.TextContent() }

// statusLog collects status events.
type statusLog struct {
	mu sync.Mutex
	ev []tool.Status
}

func (l *statusLog) add(s tool.Status) {
	l.mu.Lock()
	l.ev = append(l.ev, s)
	l.mu.Unlock()
}

func (l *statusLog) phases(id string) []tool.Phase {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ps []tool.Phase
	for _, s := range l.ev {
		if s.ToolUseID == id {
			ps = append(ps, s.Phase)
		}
	}
	return ps
}

func (l *statusLog) all(id string) []tool.Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []tool.Status
	for _, s := range l.ev {
		if s.ToolUseID == id {
			out = append(out, s)
		}
	}
	return out
}

type (
	permissionRequest  = permission.Request
	permissionDecision = permission.Decision
)
