package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/workspace"
)

func teamCall(id, name string, in map[string]any) llmtest.ToolCall {
	b, _ := json.Marshal(in)
	return llmtest.ToolCall{ID: id, Name: name, Input: string(b)}
}

// hasUse reports whether the request's conversation holds the tool use id.
func hasUse(r llmtest.Request, id string) bool {
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == llm.TypeToolUse && b.ID == id {
				return true
			}
		}
	}
	return false
}

func requestText(r llmtest.Request) string {
	var sb strings.Builder
	for _, m := range r.Messages {
		for _, b := range m.Content {
			sb.WriteString(b.Text)
			for _, c := range b.Content {
				sb.WriteString(c.Text)
			}
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// TestTeamRun is a scripted team run against the fake API server: the lead
// creates two tasks and a team of two; alice claims and completes the build
// task and tells bob, who was idle and wakes on the message, then claims
// and completes the test task. The lead hears of each member's state by
// mail and deletes the team when bob reports, which stops both members.
func TestTeamRun(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		var mu sync.Mutex
		seen := map[string][]string{} // conversation → texts of its requests
		record := func(who string, r llmtest.Request) string {
			txt := requestText(r)
			mu.Lock()
			seen[who] = append(seen[who], txt)
			mu.Unlock()
			return txt
		}
		lead := func(r llmtest.Request) llmtest.Reply {
			txt := record("lead", r)
			// Delete the team only once both members reported: alice may
			// still be finishing her last turn when bob reports.
			if strings.Contains(txt, "bob finished") && strings.Contains(txt, "[status] alice is idle") && !hasUse(r, "l4") {
				return withUsage(llmtest.ToolReply(teamCall("l4", "TeamDelete", map[string]any{"team_name": "red"})))
			}
			if !hasUse(r, "l1") {
				return withUsage(llmtest.ToolReply(
					teamCall("l1", "TaskCreate", map[string]any{"subject": "Build", "description": "build it"}),
					teamCall("l2", "TaskCreate", map[string]any{"subject": "Test", "description": "test it"}),
					teamCall("l3", "TeamCreate", map[string]any{"team_name": "red", "members": []map[string]any{
						{"name": "alice", "role": "builder", "prompt": "alice: build"},
						{"name": "bob", "role": "tester", "prompt": "bob: test"},
					}}),
				))
			}
			return withUsage(llmtest.TextReply("noted"))
		}
		alice := func(r llmtest.Request) llmtest.Reply {
			record("alice", r)
			switch {
			case !hasUse(r, "a1"):
				return withUsage(llmtest.ToolReply(teamCall("a1", "TaskUpdate", map[string]any{"taskId": "1", "status": "in_progress"})))
			case !hasUse(r, "a2"):
				return withUsage(llmtest.ToolReply(
					teamCall("a2", "TaskUpdate", map[string]any{"taskId": "1", "status": "completed"}),
					teamCall("a3", "SendMessage", map[string]any{"to": "bob", "message": "build is done"}),
				))
			}
			return withUsage(llmtest.TextReply("alice finished"))
		}
		bob := func(r llmtest.Request) llmtest.Reply {
			txt := record("bob", r)
			switch {
			case !strings.Contains(txt, "build is done"):
				return withUsage(llmtest.TextReply("waiting for the build"))
			case !hasUse(r, "b1"):
				return withUsage(llmtest.ToolReply(teamCall("b1", "TaskUpdate", map[string]any{"taskId": "2", "status": "in_progress"})))
			case !hasUse(r, "b2"):
				return withUsage(llmtest.ToolReply(teamCall("b2", "TaskUpdate", map[string]any{"taskId": "2", "status": "completed"})))
			}
			return withUsage(llmtest.TextReply("bob finished"))
		}
		route := map[string]func(llmtest.Request) llmtest.Reply{"run the team": lead, "alice: build": alice, "bob: test": bob}
		f.srv = llmtest.NewServer(t, append([]llmtest.Option{llmtest.WithResponder(func(r llmtest.Request) (llmtest.Reply, bool) {
			// A member's first prompt may already carry a message sent
			// before its first turn (alice can finish before bob starts).
			first, _, _ := strings.Cut(firstUser(r), "\n")
			h, ok := route[first]
			if !ok {
				t.Errorf("unscripted conversation %q", firstUser(r))
				return llmtest.TextReply("?"), true
			}
			return h(r), true
		})}, indexZero(f)...)...)
		st := new(store.Memory)
		sf := newSub(t, f, func(o *workspace.Options) { o.Store = st })
		a := sf.agent(t, nil)
		_, res, err := collect(t, context.Background(), a, "run the team")
		if err != nil || res.IsError {
			t.Fatalf("lead: %v %+v", err, res)
		}
		ctx := context.Background()
		tasks, _ := st.ListTasks(ctx, a.SessionID())
		if len(tasks) != 2 || tasks[0].Status != store.TaskCompleted || tasks[0].Owner != "alice" || tasks[1].Status != store.TaskCompleted || tasks[1].Owner != "bob" {
			t.Fatalf("tasks %+v", tasks)
		}
		mu.Lock()
		bobSaw := strings.Join(seen["bob"], "\n")
		leadSaw := strings.Join(seen["lead"], "\n")
		last := seen["bob"][len(seen["bob"])-1]
		mu.Unlock()
		if !strings.Contains(bobSaw, `<team-message team="red" from="alice">`+"\nbuild is done") {
			t.Fatalf("bob never got alice's message:\n%s", bobSaw)
		}
		if !strings.Contains(leadSaw, "[status] alice is idle") || !strings.Contains(leadSaw, "[status] bob is idle") || !strings.Contains(leadSaw, "bob finished") {
			t.Fatalf("the lead did not hear the members' state:\n%s", leadSaw)
		}
		// Delivered once: bob's last request holds alice's message once.
		if n := strings.Count(last, "build is done"); n != 1 {
			t.Fatalf("alice's message appears %d times in bob's conversation", n)
		}
		// The lead deleted the team once bob reported: members stopped,
		// the record kept.
		tm, _ := st.GetTeam(ctx, "red")
		if tm.Active() || len(tm.Members) != 2 {
			t.Fatalf("team after TeamDelete: %+v", tm)
		}
		for _, m := range tm.Members {
			if m.Status != store.MemberStopped {
				t.Fatalf("member %s is %s after TeamDelete", m.Name, m.Status)
			}
		}
		if !strings.Contains(leadSaw, "Team red deleted") {
			t.Fatalf("TeamDelete result not seen:\n%s", leadSaw)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
