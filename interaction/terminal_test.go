package interaction

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func permReq() *PermissionRequest {
	return &PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":"npm test","description":"Run npm test"}`),
		Description: "Run npm test", Reason: "Bash needs permission",
		Suggestions: []string{"Bash(npm test *)"}, Scopes: []settings.Scope{settings.ScopeLocal, settings.ScopeUser}}
}

// TestTerminalShowsWhatItApproves: a permission prompt shows the exact
// command, whole (a pipe, a long command, several lines), and the change
// of an edit; the model's description comes after it.
func TestTerminalShowsWhatItApproves(t *testing.T) {
	long := "printf '%s\\n' " + strings.Repeat("word ", 200) + "| tee out.txt"
	cases := []struct {
		name  string
		req   *PermissionRequest
		shows []string
	}{
		{"pipe", &PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":"sh greet.sh | tee out.txt","description":"Run greet.sh and save its output"}`),
			Description: "Run greet.sh and save its output", Reason: "sh runs another command"},
			[]string{"  $ sh greet.sh | tee out.txt\n", "the model says: Run greet.sh and save its output"}},
		{"long", &PermissionRequest{ToolName: "Bash", Input: mustJSON(t, map[string]string{"command": long})}, []string{"  $ " + long + "\n"}},
		{"lines", &PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":"cd x &&\nrm -rf build\n"}`)},
			[]string{"  $ cd x &&\n    rm -rf build\n"}},
		{"escaped", &PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":"echo \u001b[2Jhi"}`)}, []string{"$ echo \\x1b[2Jhi"}},
		{"edit", &PermissionRequest{ToolName: "Edit", Input: json.RawMessage(`{"file_path":"/p/a.go","old_string":"x := 1\ny := 2","new_string":"x := 3"}`),
			Description: "Edit a.go"}, []string{"wants to change /p/a.go (Edit):\n  - x := 1\n  - y := 2\n  + x := 3\n"}},
		{"write", &PermissionRequest{ToolName: "Write", Input: json.RawMessage(`{"file_path":"/p/new.txt","content":"hello\n"}`)},
			[]string{"wants to write /p/new.txt (Write):\n  + hello\n"}},
		{"other", &PermissionRequest{ToolName: "mcp__s__t", Input: json.RawMessage(`{"q": 1}`)}, []string{"use mcp__s__t with:\n  {\"q\":1}\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			term := NewTerminal(strings.NewReader("1\n"), &out)
			if _, err := term.Ask(context.Background(), tc.req); err != nil {
				t.Fatal(err)
			}
			s := out.String()
			for _, w := range tc.shows {
				if !strings.Contains(s, w) {
					t.Errorf("the prompt lacks %q:\n%s", w, s)
				}
			}
			if d := tc.req.Description; d != "" && strings.Index(s, d) < strings.Index(s, "Gantry wants") {
				t.Errorf("the model's description comes before what the call does:\n%s", s)
			}
			drain(term)
		})
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTerminalAnswers(t *testing.T) {
	q := &QuestionRequest{Questions: []Question{
		{Question: "Which db?", Header: "DB", Options: []Option{{Label: "SQLite"}, {Label: "Postgres"}}},
		{Question: "Checks?", Header: "Checks", MultiSelect: true, Options: []Option{{Label: "vet"}, {Label: "race"}, {Label: "fuzz"}}},
		{Question: "Name?", Header: "Name", Options: []Option{{Label: "a"}, {Label: "b"}}},
	}}
	form := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Your name"},"age":{"type":"integer"},"ok":{"type":"boolean"},"tier":{"type":"string","enum":["free","pro"],"default":"free"}},"required":["name"]}`)
	cases := []struct {
		name  string
		req   Request
		input string
		want  Answer
		shows []string
	}{
		{"allow once", permReq(), "1\n", &PermissionAnswer{Choice: AllowOnce}, []string{"wants to run this command (Bash):\n  $ npm test\n", "the model says: Run npm test", "why it asks: Bash needs permission"}},
		{"allow session", permReq(), "2\n", &PermissionAnswer{Choice: AllowSession}, []string{"Bash(npm test *) for this session"}},
		{"always allow", permReq(), "3\n", &PermissionAnswer{Choice: AllowAlways, Scope: settings.ScopeLocal}, []string{"saved to local settings"}},
		{"deny with message", permReq(), "4\nuse make test\n", &PermissionAnswer{Choice: Deny, Message: "use make test"}, nil},
		{"default is deny", permReq(), "\n\n", &PermissionAnswer{Choice: Deny}, nil},
		{"bad number asks again", permReq(), "9\nx\n1\n", &PermissionAnswer{Choice: AllowOnce}, []string{"number from 1 to 4"}},
		{"no suggestions: once or deny", &PermissionRequest{ToolName: "X"}, "2\n\n", &PermissionAnswer{Choice: Deny}, []string{"1-2"}},
		{"questions", q, "2\n1, 2\nmy own\n", &QuestionAnswer{Answers: map[string]string{"Which db?": "Postgres", "Checks?": "vet, race", "Name?": "my own"}}, []string{"[DB] Which db?"}},
		{"question skipped, out of range is free text", q, "\n7\n\n", &QuestionAnswer{Answers: map[string]string{"Checks?": "7"}}, nil},
		{"plan approved", &PlanRequest{Plan: "step 1", ReturnMode: tool.ModeDefault}, "1\n", &PlanAnswer{Approved: true, Mode: tool.ModeDefault}, []string{"  step 1"}},
		{"plan accept edits", &PlanRequest{Plan: "p"}, "2\n", &PlanAnswer{Approved: true, Mode: tool.ModeAcceptEdits}, nil},
		{"plan rejected", &PlanRequest{Plan: "p"}, "3\nadd tests\n", &PlanAnswer{Feedback: "add tests"}, nil},
		{"trust yes", &TrustRequest{Dir: "/p"}, "yes\n", &TrustAnswer{Trust: true}, []string{"trust the files in /p"}},
		{"trust no", &TrustRequest{Dir: "/p"}, "\n", &TrustAnswer{}, nil},
		{"form", &ElicitationRequest{Server: "s", Message: "who?", Schema: form}, "y\n42\n\nAda\nyes\n\n", &ElicitationAnswer{Action: ElicitAccept,
			Content: map[string]any{"age": int64(42), "ok": true, "name": "Ada", "tier": "free"}}, []string{"This field is required."}},
		{"form declined", &ElicitationRequest{Server: "s", Message: "who?", Schema: form}, "n\n", &ElicitationAnswer{Action: ElicitDecline}, nil},
		{"url", &ElicitationRequest{Server: "s", Message: "log in", URL: "https://x.test/login"}, "y\n", &ElicitationAnswer{Action: ElicitAccept}, []string{"https://x.test/login"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			term := NewTerminal(strings.NewReader(tc.input), &out)
			got, err := term.Ask(context.Background(), tc.req)
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("answer %#v, want %#v\n%s", got, tc.want, out.String())
			}
			for _, s := range tc.shows {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out.String())
				}
			}
			drain(term)
		})
	}
}

// drain lets a terminal's reader reach the end of its input.
func drain(t *Terminal) {
	for {
		if _, err := t.readLine(context.Background()); err != nil {
			return
		}
	}
}

func TestTerminalEscapesAndEndOfInput(t *testing.T) {
	var out strings.Builder
	term := NewTerminal(strings.NewReader(""), &out)
	_, err := term.Ask(context.Background(), &PermissionRequest{ToolName: "Bash", Description: "rm \x1b[2Jx\u202e"})
	if !errors.Is(err, ErrNobody) {
		t.Fatalf("end of input: %v", err)
	}
	if strings.ContainsAny(out.String(), "\x1b\u202e") {
		t.Errorf("control characters reached the terminal: %q", out.String())
	}
	// Every later request has nobody to ask too.
	if _, err := term.Ask(context.Background(), &TrustRequest{Dir: "/x"}); !errors.Is(err, ErrNobody) {
		t.Fatalf("after end of input: %v", err)
	}
}

func TestTerminalCancelKeepsTheLine(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	var out strings.Builder
	term := NewTerminal(r, &out)
	paused, resumed := 0, 0
	term.Pause = func() func() { paused++; return func() { resumed++ } }
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := term.Ask(ctx, &TrustRequest{Dir: "/x"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled ask: %v", err)
	}
	go w.Write([]byte("y\n"))
	a, err := AskTrust(context.Background(), term, &TrustRequest{Dir: "/x"})
	if err != nil || !a.Trust {
		t.Fatalf("next ask: %+v %v", a, err)
	}
	if paused != 2 || resumed != 2 {
		t.Errorf("paused %d resumed %d", paused, resumed)
	}
	w.Close()
	drain(term)
}

func FuzzParseChoice(f *testing.F) {
	for _, s := range []string{"1", "1, 2", "2 3", "0", "x", "1,,2", "-1", "99999999999999999999"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, line string, multi bool) {
		q := Question{Question: "q", MultiSelect: multi, Options: []Option{{Label: "a"}, {Label: "b"}, {Label: "c"}}}
		got := parseChoice(q, line)
		if strings.TrimSpace(line) != "" && got == "" {
			t.Fatalf("answer %q lost", line)
		}
		if got != strings.TrimSpace(line) && !multi && strings.Contains(got, ", ") {
			t.Fatalf("single choice %q gave several labels %q", line, got)
		}
	})
}
