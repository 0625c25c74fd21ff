package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main() // the Landlock helper is this binary re-executed
	testscript.Main(leakCheck{m}, map[string]func(){
		"gantry": func() {
			os.Exit(processMain(os.Args[1:]))
		},
	})
}

// leakCheck runs the tests, then fails the run if goroutines are left
// (goleak.VerifyTestMain, without its os.Exit: testscript.Main exits). It
// applies to the tests of the go test process; the gantry commands that
// scripts start are separate processes.
type leakCheck struct{ m *testing.M }

func (l leakCheck) Run() int {
	code := 0
	goleak.VerifyTestMain(l.m, goleak.Cleanup(func(c int) { code = c }))
	removeTestBinary()
	return code
}

// scriptTB lets llmtest run a server for one script: the server is closed
// when the script ends.
type scriptTB struct {
	testing.TB
	env *testscript.Env
}

func (t scriptTB) Cleanup(f func()) { t.env.Defer(f) }

// TestScripts runs the CLI end to end (testdata/script/*.txtar) against a
// fake model API. In a script, `llm` drives the fake:
//
//	llm text 'reply text'              script a text reply
//	llm tool ID NAME 'JSON' [ID NAME 'JSON'…]  script a reply of tool calls
//	llm error STATUS                   script an error response
//	llm silent                         script a reply that never comes (headers held back)
//	llm requests N                     assert N requests were received
//	llm await N                        wait until N requests were received (for a command run in the background)
//	llm sent 'substring'               assert the last request's messages contain it
//	llm results 'substring'            assert a tool result sent contains it
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			srv := llmtest.NewServer(scriptTB{TB: t, env: env})
			env.Values["llm"] = srv
			env.Setenv("ANTHROPIC_BASE_URL", srv.URL())
			env.Setenv("ANTHROPIC_API_KEY", "test-key")
			env.Setenv("LLM_OPENAI_URL", srv.OpenAIURL())
			env.Setenv("OPENAI_API_KEY", "")
			env.Setenv("OPENAI_BASE_URL", "")
			// Every gantry command of a script (and every MCP server it
			// starts) is this test binary; built with -race it would sleep
			// a second at exit (GORACE atexit_sleep_ms, default 1000 ms)
			// waiting for late race reports from goroutines a finished CLI
			// no longer has. Races are still detected and reported.
			env.Setenv("GORACE", strings.TrimSpace("atexit_sleep_ms=0 "+os.Getenv("GORACE")))
			// A per-run random value for scripts that look for leaks.
			var nonce [8]byte
			_, _ = rand.Read(nonce[:])
			env.Setenv("NONCE", hex.EncodeToString(nonce[:]))
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("GANTRY_HOME", filepath.Join(env.WorkDir, "home", ".gantry"))
			return os.MkdirAll(filepath.Join(env.WorkDir, "home"), 0o755)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"llm":      llmCmd,
			"webserve": webserveCmd,
		},
	})
}

func llmCmd(ts *testscript.TestScript, neg bool, args []string) {
	srv := ts.Value("llm").(*llmtest.Server)
	if len(args) == 0 {
		ts.Fatalf("usage: llm text|tool|error|requests|sent|results …")
	}
	switch args[0] {
	case "text":
		srv.Script(llmtest.Reply{Content: []llm.Block{llm.Text(strings.Join(args[1:], " "))}, Usage: llm.Usage{InputTokens: 1000, OutputTokens: 100}})
	case "tool":
		if (len(args)-1)%3 != 0 || len(args) == 1 {
			ts.Fatalf("usage: llm tool ID NAME JSON …")
		}
		var calls []llmtest.ToolCall
		for i := 1; i < len(args); i += 3 {
			calls = append(calls, llmtest.ToolCall{ID: args[i], Name: args[i+1], Input: args[i+2]})
		}
		srv.Script(llmtest.ToolReply(calls...))
	case "silent":
		// A server that accepts the request and never answers.
		srv.Script(llmtest.Reply{HeaderDelay: time.Minute})
	case "error":
		code, err := strconv.Atoi(args[1])
		ts.Check(err)
		srv.Script(llmtest.ErrorReply(code, "", strings.Join(args[2:], " ")))
	case "requests":
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		if got := len(srv.Requests()); (got == n) == neg {
			ts.Fatalf("requests = %d, want %d", got, n)
		}
	case "await":
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		for deadline := time.Now().Add(30 * time.Second); len(srv.Requests()) < n; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				ts.Fatalf("requests = %d after 30 s, want %d", len(srv.Requests()), n)
			}
		}
	case "sent":
		b, _ := json.Marshal(srv.LastRequest().Messages)
		if strings.Contains(string(b), args[1]) == neg {
			ts.Fatalf("last request messages %s; want contains %q = %v", b, args[1], !neg)
		}
	case "results":
		var texts []string
		for _, r := range srv.LastRequest().ToolResults() {
			b, _ := json.Marshal(r)
			texts = append(texts, string(b))
		}
		all := strings.Join(texts, "\n")
		if strings.Contains(all, args[1]) == neg {
			ts.Fatalf("tool results %s; want contains %q = %v", all, args[1], !neg)
		}
	default:
		ts.Fatalf("unknown llm command %q", args[0])
	}
	_ = fmt.Sprint
}

// webserveCmd serves the script's work directory over HTTP on loopback
// and sets WEB_URL to its address (for WebFetch scripts).
func webserveCmd(ts *testscript.TestScript, neg bool, args []string) {
	srv := httptest.NewServer(http.FileServer(http.Dir(ts.Getenv("WORK"))))
	ts.Defer(srv.Close)
	ts.Setenv("WEB_URL", srv.URL)
}
