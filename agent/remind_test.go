package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/transcript"
	"github.com/gantry-dev/gantry/workspace"
)

// queueReminder hands out queued texts one per turn and records acks.
type queueReminder struct {
	mu    sync.Mutex
	queue []string
	acked []string
	fail  bool
}

func (q *queueReminder) Remind(ctx context.Context, env *tool.Env) (string, func(), error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail {
		return "", nil, errors.New("mailbox unreachable")
	}
	if len(q.queue) == 0 {
		return "", nil, nil
	}
	text := q.queue[0]
	return text, func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.queue = q.queue[1:]
		q.acked = append(q.acked, text)
	}, nil
}

func TestReminders(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		f.srv.Script(
			llmtest.ToolReply(llmtest.ToolCall{ID: "toolu_1", Name: "Echo", Input: `{"text":"x"}`}),
			llmtest.Reply{Content: []llm.Block{llm.Text("done")}},
		)
		q := &queueReminder{queue: []string{"note one", "note two"}}
		bad := &queueReminder{fail: true}
		// Reminders are the workspace's; the loop delivers them.
		ws, err := workspace.Open(context.Background(), workspace.Options{Dir: f.dir, NoSettings: true,
			Pool: &toolset.Options{Registry: toolset.NewRegistry(), Tools: testTools(t, nil)}, Reminders: []tool.Reminder{q, bad},
			Transcripts: f.store})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		a := f.agent(t, func(o *testOpts) { o.Workspace = ws })
		evs, res, err := collect(t, context.Background(), a, "go")
		if err != nil || res.IsError {
			t.Fatal(err, res)
		}
		reqs := f.srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests", len(reqs))
		}
		// Each request carries the note delivered before it, after the
		// prompt or the tool results, and only once.
		first, second := dump(reqs[0].Messages), dump(reqs[1].Messages)
		if !strings.Contains(first, "note one") || strings.Contains(first, "note two") {
			t.Fatalf("first request: %s", first)
		}
		if strings.Count(second, "note one") != 1 || !strings.Contains(second, "note two") {
			t.Fatalf("second request: %s", second)
		}
		if strings.Join(q.acked, ",") != "note one,note two" {
			t.Fatalf("acked %v", q.acked)
		}
		notices := 0
		for _, ev := range evs {
			if n, ok := ev.(*NoticeEvent); ok && strings.Contains(n.Text, "mailbox unreachable") {
				notices++
			}
		}
		if notices != 2 {
			t.Fatalf("%d failure notices", notices)
		}
		// The notes are in the transcript, so a resumed session keeps them.
		recs, err := transcript.ReadFile(f.store.Path(f.dir, a.SessionID()))
		if err != nil {
			t.Fatal(err)
		}
		var all strings.Builder
		for _, r := range recs {
			all.Write(r.Message)
		}
		if !strings.Contains(all.String(), "note two") {
			t.Fatal("note not recorded")
		}
	})
}

func dump(msgs []llmtest.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		for _, c := range m.Content {
			b.WriteString(c.Text + "\n")
		}
	}
	return b.String()
}
