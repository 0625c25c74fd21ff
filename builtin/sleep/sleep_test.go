package sleep_test

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/builtin/sleep"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func run(t *testing.T, ctx context.Context, tl tool.Tool, env *tool.Env, in string) (*tool.Result, sleep.Output) {
	t.Helper()
	if err := tl.(tool.InputValidator).ValidateInput(ctx, env, json.RawMessage(in)); err != nil {
		t.Fatalf("ValidateInput(%s): %v", in, err)
	}
	r, err := tl.Call(ctx, env, json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	out, ok := r.Structured.(sleep.Output)
	if !ok {
		t.Fatalf("structured %T", r.Structured)
	}
	return r, out
}

func TestSleepElapsed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := sleep.New(sleep.Options{})
		r, out := run(t, t.Context(), tl, &tool.Env{}, `{"duration_seconds":90}`)
		if out.Woke != sleep.WokeElapsed || out.SleptMS != 90_000 || r.TextContent() != "Slept 1m30s." {
			t.Fatalf("%+v %q", out, r.TextContent())
		}
		// Capped at MaxDuration, and said so.
		tl = sleep.New(sleep.Options{MaxDuration: time.Minute})
		r, out = run(t, t.Context(), tl, &tool.Env{}, `{"duration_seconds":1e300}`)
		if out.SleptMS != 60_000 || r.TextContent() != "Slept 1m0s. (The sleep was capped at 1m0s.)" {
			t.Fatalf("%+v %q", out, r.TextContent())
		}
	})
}

func TestSleepInterrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, out := run(t, ctx, sleep.New(sleep.Options{}), &tool.Env{}, `{"duration_seconds":600}`)
		if out.Woke != sleep.WokeInterrupted || out.SleptMS != 5000 {
			t.Fatalf("%+v", out)
		}
	})
}

func TestSleepWaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := sleep.NewWaker()
		env := &tool.Env{Services: tool.Provide(&tool.Services{}, w)}
		w.Wake("before the sleep") // forgotten: no sleep ran
		go func() {
			time.Sleep(3 * time.Second)
			w.Wake("queued prompt")
		}()
		r, out := run(t, t.Context(), sleep.New(sleep.Options{}), env, `{"duration_seconds":600}`)
		if out.Woke != sleep.WokeUser || out.SleptMS != 3000 || out.Reason != "queued prompt" {
			t.Fatalf("%+v %q", out, r.TextContent())
		}
	})
}

func TestSleepTeamMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := new(store.Memory)
		defer st.Close()
		s := &tool.Services{}
		tool.Provide[store.Mailboxes](s, st)
		tool.Provide(s, store.Scope{Team: "red", Name: "scout"})
		env := &tool.Env{Services: s}
		go func() {
			time.Sleep(2 * time.Second)
			_, _ = st.Send(context.Background(), "lead", []string{store.MailboxName("red", "scout")}, "look at x")
		}()
		_, out := run(t, t.Context(), sleep.New(sleep.Options{}), env, `{"duration_seconds":600}`)
		if out.Woke != sleep.WokeMessage || out.SleptMS != 2000 {
			t.Fatalf("%+v", out)
		}
	})
}

// TestSleepBackgroundTask: a real background command and a background Go
// task (how subagents run) end a sleep; the result names what ended.
func TestSleepBackgroundTask(t *testing.T) {
	tasks := shell.NewJobs()
	defer tasks.Close()
	env := &tool.Env{WorkDir: t.TempDir(), ToolResultsDir: t.TempDir(), Services: tool.Provide(&tool.Services{}, tasks)}
	bash := shell.NewBash(shell.Options{})
	raw, _ := json.Marshal(map[string]any{"command": "sleep 0.3; echo done", "run_in_background": true, "description": "short job"})
	if _, err := bash.Call(t.Context(), env, raw); err != nil {
		t.Fatal(err)
	}
	r, out := run(t, t.Context(), sleep.New(sleep.Options{}), env, `{"duration_seconds":600}`)
	if out.Woke != sleep.WokeTask || len(out.Tasks) != 1 || out.Tasks[0].Status != shell.TaskCompleted || out.SleptMS >= 600_000 {
		t.Fatalf("%+v %q", out, r.TextContent())
	}
	release := make(chan struct{})
	if _, err := tasks.Go(env.ToolResultsDir, "agent", "reviewer", func(ctx context.Context, _ io.Writer) error {
		<-release
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(100 * time.Millisecond); close(release) }()
	r, out = run(t, t.Context(), sleep.New(sleep.Options{}), env, `{"duration_seconds":600}`)
	if out.Woke != sleep.WokeTask || len(out.Tasks) != 1 || out.Tasks[0].Kind != "agent" {
		t.Fatalf("%+v %q", out, r.TextContent())
	}
}

func TestSleepInputAndTraits(t *testing.T) {
	tl := sleep.New(sleep.Options{})
	for _, in := range []string{`{"duration_seconds":0}`, `{"duration_seconds":-3}`, `{}`} {
		if err := tl.(tool.InputValidator).ValidateInput(t.Context(), nil, json.RawMessage(in)); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
	if got := tool.TraitsOf(tl, json.RawMessage(`{"duration_seconds":1}`)); got != tool.ReadOnlyTraits {
		t.Errorf("traits %+v", got)
	}
}
