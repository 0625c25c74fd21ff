package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/builtin/notify"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/tool"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func call(t *testing.T, env *tool.Env, in string) *tool.Result {
	t.Helper()
	tl := notify.New()
	if err := tl.(tool.InputValidator).ValidateInput(t.Context(), env, json.RawMessage(in)); err != nil {
		t.Fatalf("ValidateInput: %v", err)
	}
	r, err := tl.Call(t.Context(), env, json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sink is a webhook receiver on loopback.
type sink struct {
	mu     sync.Mutex
	got    []notify.Payload
	auth   []string
	status int
	*httptest.Server
}

func newSink(t *testing.T, status int) *sink {
	s := &sink{status: status}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p notify.Payload
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &p); err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("bad webhook request %s %q: %v", r.Method, body, err)
		}
		s.mu.Lock()
		s.got = append(s.got, p)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		w.WriteHeader(s.status)
	}))
	t.Cleanup(s.Close)
	return s
}

func TestPushNotification(t *testing.T) {
	hook := newSink(t, http.StatusNoContent)
	var ui []*interaction.NotificationRequest
	front := interaction.Funcs{Notification: func(_ context.Context, r *interaction.NotificationRequest) (*interaction.NotificationAnswer, error) {
		ui = append(ui, r)
		return &interaction.NotificationAnswer{Delivered: []string{"terminal"}}, nil
	}}
	wh := &notify.Webhook{URL: hook.URL, Header: http.Header{"Authorization": {"Bearer k"}},
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	s := &tool.Services{}
	tool.Provide(s, wh.Wrap(front))
	env := &tool.Env{SessionID: "sess-1", ToolUseID: "toolu_9", Services: s}

	r := call(t, env, `{"message":"  Tests pass; ready to merge. ","title":"Done"}`)
	if r.IsError || r.TextContent() != "Notification delivered (webhook, terminal)." {
		t.Fatalf("%q", r.TextContent())
	}
	want := notify.Payload{Type: "notification", Title: "Done", Message: "Tests pass; ready to merge.", SessionID: "sess-1",
		ToolUseID: "toolu_9", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if len(hook.got) != 1 || hook.got[0] != want || hook.auth[0] != "Bearer k" {
		t.Errorf("webhook got %+v %q", hook.got, hook.auth)
	}
	if len(ui) != 1 || ui[0].Message != want.Message || ui[0].ToolUseID != "toolu_9" {
		t.Errorf("front end got %+v", ui)
	}

	// A failing webhook is said; the front end still delivered.
	bad := newSink(t, http.StatusInternalServerError)
	s2 := &tool.Services{}
	tool.Provide(s2, (&notify.Webhook{URL: bad.URL}).Wrap(front))
	r = call(t, &tool.Env{Services: s2}, `{"message":"x"}`)
	if r.IsError || !strings.Contains(r.TextContent(), "delivered (terminal)") || !strings.Contains(r.TextContent(), "500") {
		t.Errorf("%q", r.TextContent())
	}
	// Only a failing webhook: an error result.
	s3 := &tool.Services{}
	tool.Provide(s3, (&notify.Webhook{URL: bad.URL}).Wrap(nil))
	if r = call(t, &tool.Env{Services: s3}, `{"message":"x"}`); !r.IsError {
		t.Errorf("%q", r.TextContent())
	}

	// Nobody to tell: an error result that says so.
	s4 := &tool.Services{}
	tool.Provide(s4, interaction.Nobody)
	for _, env := range []*tool.Env{{Services: s4}, {}} {
		if r := call(t, env, `{"message":"x"}`); !r.IsError || !strings.Contains(r.TextContent(), "Nobody can be notified") {
			t.Errorf("%q", r.TextContent())
		}
	}
}

func TestWrapPassesOtherRequests(t *testing.T) {
	hook := newSink(t, http.StatusOK)
	ch := (&notify.Webhook{URL: hook.URL}).Wrap(interaction.Funcs{Trust: func(context.Context, *interaction.TrustRequest) (*interaction.TrustAnswer, error) {
		return &interaction.TrustAnswer{Trust: true}, nil
	}})
	if a, err := interaction.AskTrust(t.Context(), ch, &interaction.TrustRequest{Dir: "/x"}); err != nil || !a.Trust {
		t.Fatalf("%+v %v", a, err)
	}
	if _, err := interaction.AskTrust(t.Context(), (&notify.Webhook{URL: hook.URL}).Wrap(nil), &interaction.TrustRequest{}); !errors.Is(err, interaction.ErrNobody) {
		t.Errorf("%v", err)
	}
	if len(hook.got) != 0 {
		t.Errorf("posted %+v", hook.got)
	}
}

func TestPushNotificationInput(t *testing.T) {
	tl := notify.New()
	for _, in := range []string{`{"message":"  "}`, `{}`, `{"message":"` + strings.Repeat("a", 1001) + `"}`} {
		if err := tl.(tool.InputValidator).ValidateInput(t.Context(), nil, json.RawMessage(in)); err == nil {
			t.Errorf("%.40s accepted", in)
		}
	}
	tr := tool.TraitsOf(tl, json.RawMessage(`{"message":"x"}`))
	if tr.ReadOnly || !tr.ConcurrencySafe || tr.Destructive() || !tr.Planning {
		t.Errorf("traits %+v", tr)
	}
}

// TestDesktop runs a stand-in notify-send from PATH and checks the
// arguments arrive as they were given, never through a shell.
func TestDesktop(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("osascript")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "args")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + log + "\n"
	if err := os.WriteFile(filepath.Join(dir, "notify-send"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if err := notify.Desktop(t.Context(), "", "it's done; $(rm -rf /)"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(log)
	if string(got) != "--app-name=gantry\n--\nGantry\nit's done; $(rm -rf /)\n" {
		t.Errorf("args %q", got)
	}
	t.Setenv("PATH", t.TempDir())
	if err := notify.Desktop(t.Context(), "t", "m"); err == nil || !strings.Contains(err.Error(), "notify-send") {
		t.Errorf("%v", err)
	}
}
