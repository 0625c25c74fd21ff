package team

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeRunner records what the tools ask of the member runner.
type fakeRunner struct {
	st      store.Store
	mu      sync.Mutex
	started []string
	prompts map[string]string
	stopped []string
	fail    string // member name whose start fails
}

func (f *fakeRunner) StartMember(ctx context.Context, env *tool.Env, t store.Team, m store.Member, prompt string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m.Name == f.fail {
		return fmt.Errorf("no model for %s", m.Name)
	}
	f.started = append(f.started, m.Name)
	if f.prompts == nil {
		f.prompts = map[string]string{}
	}
	f.prompts[m.Name] = prompt
	return f.st.SetMemberStatus(ctx, t.Name, m.Name, store.MemberRunning, "")
}

func (f *fakeRunner) StopTeam(ctx context.Context, team string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = append(f.stopped, team)
	return nil
}

func services(st store.Store, r Runner, sc *store.Scope) *tool.Services {
	s := &tool.Services{}
	tool.Provide[store.Teams](s, st)
	tool.Provide[store.Mailboxes](s, st)
	if r != nil {
		tool.Provide(s, r)
	}
	if sc != nil {
		tool.Provide(s, *sc)
	}
	return s
}

func deliver(t *testing.T, env *tool.Env) string {
	t.Helper()
	text, ack, err := Inbox{}.Remind(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if ack != nil {
		ack()
	}
	return text
}

func TestTeamFlow(t *testing.T) {
	st := new(store.Memory)
	r := &fakeRunner{st: st}
	lead := &tool.Env{SessionID: "lead-session", Services: services(st, r, nil)}
	alice := &tool.Env{SessionID: "a", Services: services(st, r, &store.Scope{TaskList: "team/red", Name: "alice", Team: "red"})}
	bob := &tool.Env{SessionID: "b", Services: services(st, r, &store.Scope{TaskList: "team/red", Name: "bob", Team: "red"})}

	res := tooltest.Call(t, NewCreate(), lead, `{"team_name":"red","description":"ship it","members":[{"name":"alice","subagent_type":"general-purpose","role":"coder","prompt":"write the code"},{"name":"bob","prompt":"review"}]}`)
	if res.IsError {
		t.Fatal(res.TextContent())
	}
	if txt := res.TextContent(); !strings.Contains(txt, "- alice (general-purpose): running") || !strings.Contains(txt, `"lead-session"`) {
		t.Fatalf("create: %s", txt)
	}
	if r.prompts["alice"] != "write the code" || len(r.started) != 2 {
		t.Fatalf("started %v %v", r.started, r.prompts)
	}
	tm, _ := st.GetTeam(context.Background(), "red")
	if tm.Lead != "lead-session" {
		t.Fatalf("lead %q", tm.Lead)
	}

	// lead → alice, bob → alice, alice → lead, alice → everyone.
	for _, c := range []struct {
		env *tool.Env
		in  string
	}{
		{lead, `{"to":"alice","message":"start with the parser"}`},
		{bob, `{"to":"alice","message":"ping from bob"}`},
		{alice, `{"to":"lead","message":"parser done"}`},
		{alice, `{"to":"*","message":"all: tests pass"}`},
	} {
		if res := tooltest.Call(t, NewSend(), c.env, c.in); res.IsError {
			t.Fatalf("%s: %s", c.in, res.TextContent())
		}
	}
	got := deliver(t, alice)
	if strings.Index(got, "start with the parser") > strings.Index(got, "ping from bob") || !strings.Contains(got, `from="bob"`) || strings.Contains(got, "all: tests pass") {
		t.Fatalf("alice got:\n%s", got)
	}
	if again := deliver(t, alice); again != "" {
		t.Fatalf("delivered twice: %s", again)
	}
	if got := deliver(t, lead); !strings.Contains(got, "parser done") || !strings.Contains(got, "all: tests pass") || !strings.Contains(got, `team="red" from="alice"`) {
		t.Fatalf("lead got:\n%s", got)
	}
	if got := deliver(t, bob); !strings.Contains(got, "all: tests pass") {
		t.Fatalf("bob got:\n%s", got)
	}

	for _, c := range []struct {
		env       *tool.Env
		tool      tool.Tool
		in, wants string
	}{
		{lead, NewSend(), `{"to":"carol","message":"x"}`, `no member "carol"`},
		{alice, NewSend(), `{"to":"alice","message":"x"}`, "yourself"},
		{lead, NewSend(), `{"to":"alice","message":"  "}`, "empty"},
		{alice, NewCreate(), `{"team_name":"sub","members":[{"name":"x","prompt":"p"}]}`, "only a lead"},
		{alice, NewDelete(), `{"team_name":"red"}`, "Only the lead"},
		{lead, NewCreate(), `{"team_name":"red","members":[{"name":"x","prompt":"p"}]}`, "already exists"},
		{lead, NewCreate(), `{"team_name":"bad name","members":[{"name":"x","prompt":"p"}]}`, "letters, digits"},
		{lead, NewCreate(), `{"team_name":"t2","members":[{"name":"lead","prompt":"p"}]}`, "reserved"},
		{lead, NewCreate(), `{"team_name":"t2","members":[]}`, "1 to 8"},
		{lead, NewDelete(), `{"team_name":"nope"}`, "not found"},
	} {
		if res := tooltest.Call(t, c.tool, c.env, c.in); !res.IsError || !strings.Contains(res.TextContent(), c.wants) {
			t.Errorf("%s %s: %s", c.tool.Spec().Name, c.in, res.TextContent())
		}
	}

	res = tooltest.Call(t, NewDelete(), lead, `{"team_name":"red"}`)
	if res.IsError || len(r.stopped) != 1 || !strings.Contains(res.TextContent(), "alice (general-purpose): stopped") {
		t.Fatalf("delete: %s %v", res.TextContent(), r.stopped)
	}
	if tm, _ := st.GetTeam(context.Background(), "red"); tm.Active() {
		t.Fatal("team still active")
	}
	if res := tooltest.Call(t, NewSend(), alice, `{"to":"bob","message":"x"}`); !res.IsError || !strings.Contains(res.TextContent(), "deleted") {
		t.Fatalf("send after delete: %s", res.TextContent())
	}
	if res := tooltest.Call(t, NewSend(), lead, `{"to":"bob","message":"x"}`); !res.IsError || !strings.Contains(res.TextContent(), "not in a team") {
		t.Fatalf("lead send after delete: %s", res.TextContent())
	}
}

func TestCreateStartFailures(t *testing.T) {
	st := new(store.Memory)
	r := &fakeRunner{st: st, fail: "bob"}
	lead := &tool.Env{SessionID: "L", Services: services(st, r, nil)}
	res := tooltest.Call(t, NewCreate(), lead, `{"team_name":"t","members":[{"name":"alice","prompt":"p"},{"name":"bob","prompt":"p"}]}`)
	if res.IsError || !strings.Contains(res.TextContent(), "Not started:\nbob: no model for bob") || !strings.Contains(res.TextContent(), "bob: failed") {
		t.Fatalf("partial: %s", res.TextContent())
	}
	r.fail = "solo"
	res = tooltest.Call(t, NewCreate(), lead, `{"team_name":"u","members":[{"name":"solo","prompt":"p"}]}`)
	if !res.IsError || !strings.Contains(res.TextContent(), "No member") {
		t.Fatalf("all failed: %s", res.TextContent())
	}
	if tm, err := st.GetTeam(context.Background(), "u"); err != nil || tm.Active() {
		t.Fatalf("a team with no member left active: %+v %v", tm, err)
	}
}

func TestWithoutRunner(t *testing.T) {
	st := new(store.Memory)
	env := &tool.Env{SessionID: "L", Services: services(st, nil, nil)}
	for _, tl := range Tools() {
		if e, ok := tl.(tool.Enabler); ok && e.Enabled(context.Background(), env) {
			t.Errorf("%s enabled without a runner", tl.Spec().Name)
		}
	}
	member := &tool.Env{SessionID: "m", Services: services(st, nil, &store.Scope{Team: "x", Name: "m"})}
	if e, ok := NewSend().(tool.Enabler); !ok || !e.Enabled(context.Background(), member) {
		t.Error("SendMessage hidden from a team member")
	}
	if res := tooltest.Call(t, NewCreate(), env, `{"team_name":"t","members":[{"name":"a","prompt":"p"}]}`); !res.IsError || !strings.Contains(res.TextContent(), "cannot run") {
		t.Fatalf("create without runner: %s", res.TextContent())
	}
	if res := tooltest.Call(t, NewSend(), &tool.Env{}, `{"to":"a","message":"p"}`); !res.IsError || !strings.Contains(res.TextContent(), "not available") {
		t.Fatalf("send without store: %s", res.TextContent())
	}
	if text, ack, err := (Inbox{}).Remind(context.Background(), &tool.Env{}); text != "" || ack != nil || err != nil {
		t.Fatal("inbox without services")
	}
}

// BenchmarkInbox1000 sends 1,000 messages to a member and delivers them
// through Inbox as turn boundaries do.
func BenchmarkInbox1000(b *testing.B) {
	ctx := context.Background()
	st := new(store.Memory)
	env := &tool.Env{Services: services(st, nil, &store.Scope{Team: "t", Name: "m"})}
	box := store.MailboxName("t", "m")
	for b.Loop() {
		for i := range 1000 {
			if _, err := st.Send(ctx, "x", []string{box}, fmt.Sprint(i)); err != nil {
				b.Fatal(err)
			}
		}
		for n := 0; n < 1000; n += MaxDelivered {
			_, ack, err := Inbox{}.Remind(ctx, env)
			if err != nil || ack == nil {
				b.Fatal(err)
			}
			ack()
		}
	}
}
