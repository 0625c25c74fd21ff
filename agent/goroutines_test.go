package agent

import (
	"bytes"
	"context"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// ownGoroutines counts the live goroutines that carry the pprof label
// gtest=label (goroutines inherit their creator's labels) and run Gantry
// code: the HTTP transport's connection goroutines, which a session's
// request may create, belong to the shared provider and are not counted.
func ownGoroutines(t *testing.T, label string) int {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, group := range strings.Split(b.String(), "\n\n") {
		if !strings.Contains(group, `"gtest":"`+label+`"`) || !strings.Contains(group, "github.com/gantry-dev/gantry/") {
			continue
		}
		head, _, _ := strings.Cut(group, " @ ")
		c, err := strconv.Atoi(strings.TrimSpace(head[strings.LastIndexByte(head, '\n')+1:]))
		if err != nil {
			t.Fatalf("goroutine profile group %q: %v", group, err)
		}
		n += c
	}
	return n
}

// A session in flight holds at most two goroutines (the caller's, running
// the loop, and one for the running tool call); between prompts it holds
// none.
func TestSessionGoroutines(t *testing.T) {
	f := newFixture(t)
	f.srv.Script(
		llmtest.ToolReply(llmtest.ToolCall{ID: "g", Name: "Gate", Input: `{"text":"x"}`}),
		llmtest.TextReply("done"),
		llmtest.TextReply("again"),
	)
	started, release := make(chan struct{}), make(chan struct{})
	gate := tool.Must(tool.NewText("Gate", "Waits for the test.", func(ctx context.Context, env *tool.Env, in echoIn) (string, error) {
		close(started)
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, tool.ReadOnly()))
	a := f.agent(t, func(o *testOpts) { o.Pool = toolset.Options{Tools: []tool.Tool{gate}} })

	const label = "session"
	done := make(chan error, 1)
	pprof.Do(context.Background(), pprof.Labels("gtest", label), func(ctx context.Context) {
		go func() {
			res, err := a.Prompt(ctx, "open the gate")
			if err == nil && res.Text != "done" {
				err = &resultError{res.Text}
			}
			done <- err
		}()
	})
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("the run ended before the call started: %v", err)
	}
	// The call starts inside Stream.Add, which runs on a short-lived
	// helper while the loop's goroutine waits (see package offstack): for
	// an instant after the tool starts the helper is still returning.
	// Wait for it to end; the count must settle at two.
	got := ownGoroutines(t, label)
	for deadline := time.Now().Add(5 * time.Second); got > 2 && time.Now().Before(deadline); got = ownGoroutines(t, label) {
		time.Sleep(time.Millisecond)
	}
	if got != 2 {
		t.Errorf("%d goroutines while a tool call runs, want 2 (the loop's and the call's)", got)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	idle := false
	for range 500 {
		if idle = ownGoroutines(t, label) == 0; idle {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !idle {
		t.Errorf("%d goroutines between prompts, want none", ownGoroutines(t, label))
	}
	// The idle session still works.
	if res, err := a.Prompt(context.Background(), "again"); err != nil || res.Text != "again" {
		t.Fatalf("second prompt: %v %+v", err, res)
	}
}

type resultError struct{ text string }

func (e *resultError) Error() string { return "unexpected result " + e.text }

// Sessions built alike hold one system prompt; a different one is its own.
func TestSystemPromptShared(t *testing.T) {
	f := newFixture(t)
	a, b := f.agent(t, nil), f.agent(t, nil)
	if a.SystemPrompt() == "" || unsafe.StringData(a.SystemPrompt()) != unsafe.StringData(b.SystemPrompt()) {
		t.Fatal("two sessions built alike hold a system prompt each")
	}
	c := f.agent(t, func(o *testOpts) { o.AppendSystemPrompt = "Be brief." })
	if !strings.Contains(c.SystemPrompt(), "Be brief.") || unsafe.StringData(c.SystemPrompt()) == unsafe.StringData(a.SystemPrompt()) {
		t.Fatalf("a different prompt was shared: %q", c.SystemPrompt())
	}
}
