package streamjson_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/llm/llmtest"
)

// sdkToolsDecls loads the tool input and output types the installed Agent
// SDK declares (sdk-tools.d.ts).
func sdkToolsDecls(t *testing.T) tsDecls {
	t.Helper()
	_, sdkDir := agentSDK(t)
	src, err := os.ReadFile(filepath.Join(sdkDir, "node_modules", "@anthropic-ai", "claude-agent-sdk", "sdk-tools.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseDecls(string(src))
	if err != nil {
		t.Fatalf("parsing sdk-tools.d.ts: %v", err)
	}
	return d
}

// TestToolResultShapes runs real calls of the built-in tools through the
// gantry binary (-p --output-format stream-json, the fake model API) and
// checks every tool_use_result against the output type the installed
// Agent SDK declares for that tool in sdk-tools.d.ts: required fields
// present, no field it does not declare, every value of its declared type.
func TestToolResultShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gantry")
	}
	decls := sdkToolsDecls(t)
	bin := buildGantry(t)
	work := t.TempDir()
	home := t.TempDir()
	files := map[string]string{
		"a.txt":      "alpha\nbeta\ngamma\n",
		"edit.txt":   "one\ntwo\nthree\n",
		"write.txt":  "old content\n",
		"src/m.go":   "package m\n\nfunc F() int { return 1 }\n",
		"nb.ipynb":   `{"cells":[{"cell_type":"code","id":"c1","metadata":{},"source":["print(1)"],"outputs":[],"execution_count":null}],"metadata":{"language_info":{"name":"python"}},"nbformat":4,"nbformat_minor":5}`,
		"img/px.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82",
	}
	for name, content := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// One call per model turn; want is the SDK's output type of the call.
	calls := []struct {
		name, input, want string
	}{
		{"Read", `{"file_path":"a.txt"}`, "FileReadOutput"},
		{"Read", `{"file_path":"a.txt","offset":2,"limit":1}`, "FileReadOutput"},
		{"Read", `{"file_path":"img/px.png"}`, "FileReadOutput"},
		{"Read", `{"file_path":"nb.ipynb"}`, "FileReadOutput"},
		{"Read", `{"file_path":"edit.txt"}`, "FileReadOutput"},
		{"Edit", `{"file_path":"edit.txt","old_string":"two","new_string":"TWO"}`, "FileEditOutput"},
		{"Read", `{"file_path":"write.txt"}`, "FileReadOutput"},
		{"Write", `{"file_path":"write.txt","content":"new content\n"}`, "FileWriteOutput"},
		{"Write", `{"file_path":"fresh.txt","content":"created\n"}`, "FileWriteOutput"},
		{"NotebookEdit", `{"notebook_path":"nb.ipynb","cell_id":"c1","new_source":"print(2)"}`, "NotebookEditOutput"},
		{"Glob", `{"pattern":"**/*.go"}`, "GlobOutput"},
		{"Grep", `{"pattern":"return","output_mode":"content"}`, "GrepOutput"},
		{"Grep", `{"pattern":"alpha"}`, "GrepOutput"},
		{"Grep", `{"pattern":"a","output_mode":"count"}`, "GrepOutput"},
		{"Bash", `{"command":"echo hi; echo err >&2"}`, "BashOutput"},
		{"Bash", `{"command":"sleep 30","run_in_background":true}`, "BashOutput"},
		{"TaskStop", `{"task_id":"$BG"}`, "TaskStopOutput"},
		{"TodoWrite", `{"todos":[{"content":"do it","status":"pending","activeForm":"Doing it"}]}`, "TodoWriteOutput"},
		{"TaskCreate", `{"subject":"ship","description":"ship it"}`, "TaskCreateOutput"},
		{"TaskGet", `{"taskId":"1"}`, "TaskGetOutput"},
		{"TaskUpdate", `{"taskId":"1","status":"in_progress"}`, "TaskUpdateOutput"},
		{"TaskList", `{}`, "TaskListOutput"},
		{"CronCreate", `{"cron":"0 9 * * *","prompt":"standup"}`, "CronCreateOutput"},
		{"CronList", `{}`, "CronListOutput"},
		{"CronDelete", `{"id":"$CRON"}`, "CronDeleteOutput"},
		{"Agent", `{"description":"look","prompt":"look around","subagent_type":"general-purpose"}`, "AgentOutput"},
		{"EnterPlanMode", `{}`, "EnterPlanModeOutput"},
		{"ExitPlanMode", `{"plan":"1. do it"}`, "ExitPlanModeOutput"},
	}
	// The model makes one call per turn; the subagent of the Agent call
	// answers at once. TaskStop and CronDelete name what earlier calls
	// made, read from the tool results the model was sent.
	var mu sync.Mutex
	step := 0
	var bgTask, cronID string
	idRE := regexp.MustCompile(`(?:background with task id|session-only job) (\S+?)[. ]`)
	srv := llmtest.NewServer(t, llmtest.WithResponder(func(req llmtest.Request) (llmtest.Reply, bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(req.Messages) > 0 && len(req.Messages[0].Content) > 0 && req.Messages[0].Content[0].Text == "look around" {
			return llmtest.TextReply("the subagent looked"), true
		}
		for _, b := range req.ToolResults() {
			for _, c := range b.Content {
				if m := idRE.FindStringSubmatch(c.Text); m != nil {
					if strings.Contains(m[0], "task id") {
						bgTask = m[1]
					} else {
						cronID = m[1]
					}
				}
			}
		}
		if step >= len(calls) {
			return llmtest.TextReply("all done"), true
		}
		c := calls[step]
		in := strings.ReplaceAll(strings.ReplaceAll(c.input, "$BG", bgTask), "$CRON", cronID)
		id := fmt.Sprintf("call_%d", step)
		step++
		return llmtest.ToolReply(llmtest.ToolCall{ID: id, Name: c.name, Input: in}), true
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-p", "use every tool", "--output-format", "stream-json", "--verbose",
		"--permission-mode", "bypassPermissions", "--model", "claude-sonnet-4-5")
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GANTRY_HOME=" + filepath.Join(home, ".gantry"),
		"ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=test-key", "GANTRY_ALLOW_ROOT=1"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gantry: %v\nstderr:\n%s", err, stderr.String())
	}
	seen := map[string]int{}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m struct {
			Type    string `json:"type"`
			Message struct {
				Content []struct {
					Type      string `json:"type"`
					ID        string `json:"id"`
					Name      string `json:"name"`
					ToolUseID string `json:"tool_use_id"`
					IsError   bool   `json:"is_error"`
				} `json:"content"`
			} `json:"message"`
			ParentToolUseID *string         `json:"parent_tool_use_id"`
			ToolUseResult   json.RawMessage `json:"tool_use_result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("bad line %s: %v", sc.Bytes(), err)
		}
		for _, b := range m.Message.Content {
			switch {
			case m.Type == "user" && b.Type == "tool_result" && m.ParentToolUseID == nil:
				var step int
				if _, err := fmt.Sscanf(b.ToolUseID, "call_%d", &step); err != nil || step >= len(calls) {
					t.Fatalf("unexpected tool result %s", b.ToolUseID)
				}
				c := calls[step]
				if b.IsError {
					t.Errorf("%s %s failed: %s", c.name, c.input, m.ToolUseResult)
					continue
				}
				var v any
				if err := json.Unmarshal(m.ToolUseResult, &v); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				want := decls[c.want]
				if want == nil {
					t.Fatalf("sdk-tools.d.ts declares no %s", c.want)
				}
				if err := decls.check(want, v, c.name); err != nil {
					t.Errorf("%s %s: tool_use_result is not a %s: %v\n%s", c.name, c.input, c.want, err, m.ToolUseResult)
				}
				seen[c.name]++
			}
		}
	}
	t.Logf("tool_use_result checked against sdk-tools.d.ts: %v", seen)
	for _, c := range calls {
		if seen[c.name] == 0 {
			t.Errorf("no result of %s was seen", c.name)
		}
	}
}

// TestSDKDeclsRejectOtherShapes checks the checker against the installed
// declarations with the shapes Gantry gave before it followed them: each
// must fail.
func TestSDKDeclsRejectOtherShapes(t *testing.T) {
	decls := sdkToolsDecls(t)
	for _, tt := range []struct{ typ, json string }{
		{"BashOutput", `{"output":"hi\n","exit_code":0,"output_bytes":3}`},
		{"BashOutput", `{"stdout":"hi\n","stderr":""}`},
		{"FileReadOutput", `"     1\talpha"`},
		{"FileReadOutput", `{"type":"text","file":{"filePath":"/a","content":"x","numLines":1,"startLine":1}}`},
		{"FileEditOutput", `"Edited /a: replaced 1 occurrence."`},
		{"GlobOutput", `{"durationMs":1,"numFiles":1,"filenames":["/a"],"truncated":false,"extra":1}`},
	} {
		var v any
		if err := json.Unmarshal([]byte(tt.json), &v); err != nil {
			t.Fatal(err)
		}
		if err := decls.check(decls[tt.typ], v, tt.typ); err == nil {
			t.Errorf("%s accepted %s", tt.typ, tt.json)
		}
	}
}
