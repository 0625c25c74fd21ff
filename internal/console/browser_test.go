package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/transcript"
	"github.com/gantry-dev/gantry/workspace"
)

// ScreenshotsEnv names a directory where the browser test saves a
// screenshot of each page (for docs/console.md); unset, it writes
// nothing.
const ScreenshotsEnv = "GANTRY_CONSOLE_SCREENSHOTS"

// chromium returns the path of a Chromium-family browser, or skips.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH: the console's browser tests need it (scripts/setup --test installs the Debian package)")
	return ""
}

// agentRunner runs the real agent against the fake model server, with no
// settings files and no MCP.
func agentRunner(t testing.TB, srv *llmtest.Server) *serve.AgentRunner {
	home := t.TempDir()
	return &serve.AgentRunner{
		NewProvider: func(_ context.Context, model string) (llm.Provider, string, error) {
			if model == "" {
				model = "claude-sonnet-4-5"
			}
			return anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test-key"}), model, nil
		},
		Sessions: transcript.NewStore(home),
		Workspace: func(o *workspace.Options) {
			o.NoSettings, o.NoMCP, o.NoAgentFiles = true, true, true
			o.UserHome = home
			o.Getenv = func(k string) string {
				if k == "HOME" || k == "GANTRY_HOME" {
					return home
				}
				return ""
			}
		},
	}
}

// page drives one browser tab.
type page struct {
	t    *testing.T
	ctx  context.Context
	base string
	shot string // screenshot directory ("" = none)
}

func (p *page) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.fatal(what, err)
	}
}

// fatal fails the test with the page's main element.
func (p *page) fatal(what string, err error) {
	p.t.Helper()
	cctx, cancel := context.WithTimeout(p.ctx, 2*time.Second)
	html, _ := chromedp.Run(cctx, chromedp.OuterHTML(chromedp.CSS("main")))
	cancel()
	p.t.Fatalf("%s: %v\npage:\n%s", what, err, html)
}

// wait polls a JavaScript condition until it holds.
func (p *page) wait(what, js string) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := chromedp.Run(p.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(time.Until(deadline)), chromedp.WithPollingInterval(20*time.Millisecond)))
		if err == nil {
			return
		}
		// A navigation (a form's redirect) ends the poll: poll the new page.
		if time.Now().Before(deadline) && (strings.Contains(err.Error(), "navigated or closed") || strings.Contains(err.Error(), "context")) && p.ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		p.fatal("waiting for "+what, err)
	}
}

// click clicks the element sel matches as soon as there is one (the
// page's script may be replacing it: a node found by the protocol can be
// gone by the time it is clicked).
func (p *page) click(sel string) {
	p.t.Helper()
	p.wait("clicking "+sel, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.click(); return true; })()`, sel))
}

// tabTo moves the focus with the Tab key, from the top of the page, until
// the element sel matches has it: the element is reachable from the
// keyboard.
func (p *page) tabTo(sel string, max int) {
	p.t.Helper()
	if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`document.activeElement?.blur(), true`)); err != nil {
		p.fatal("blur", err)
	}
	for range max {
		p.run("tab", chromedp.KeyEvent(kb.Tab))
		at, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](fmt.Sprintf(`!!document.activeElement?.matches(%q)`, sel)))
		if err != nil {
			p.fatal("focus", err)
		}
		if at {
			return
		}
	}
	p.fatal("tabbing to "+sel, fmt.Errorf("not reached in %d presses of Tab", max))
}

// visible asserts that the elements are on screen, inside the viewport's
// width, and that the page does not scroll sideways.
func (p *page) visible(where string, sels ...string) {
	p.t.Helper()
	list, _ := json.Marshal(sels)
	bad, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`(() => {
		const bad = [];
		for (const sel of %s) {
			const e = document.querySelector(sel);
			if (!e) { bad.push(sel + ': missing'); continue; }
			const r = e.getBoundingClientRect();
			if (r.width === 0 || r.height === 0 || r.left < 0 || r.right > innerWidth + 1) bad.push(sel + ': at ' + JSON.stringify(r));
		}
		if (document.documentElement.scrollWidth > innerWidth + 1) bad.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + innerWidth);
		return bad;
	})()`, list)))
	if err != nil {
		p.fatal("checking "+where, err)
	}
	if len(bad) > 0 {
		p.t.Errorf("%s: %s", where, strings.Join(bad, "; "))
	}
}

// screenshot saves the page, when screenshots are asked for.
func (p *page) screenshot(name string) {
	p.t.Helper()
	if p.shot == "" {
		return
	}
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.fatal("screenshot "+name, err)
	}
	if err := os.WriteFile(filepath.Join(p.shot, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// both checks a page at phone and desktop widths and screenshots it.
func (p *page) both(name string, sels ...string) {
	p.t.Helper()
	p.run("phone width", chromedp.EmulateViewport(390, 844))
	p.visible(name+" (phone)", sels...)
	p.screenshot(name + "-phone")
	p.run("desktop width", chromedp.EmulateViewport(1280, 900))
	p.visible(name+" (desktop)", sels...)
	p.screenshot(name)
}

// TestBrowser drives the console in headless Chromium against a real
// agent and the fake model server: log in, start a run, watch its text
// and tool cards stream in, approve a Bash call and see its output, see an
// Edit's diff and deny it with a message the model receives, answer an
// AskUserQuestion, cancel a run, add a cron job and see its next fires,
// pause and resume it.
func TestBrowser(t *testing.T) {
	exe := chromium(t)
	if testing.Short() {
		t.Skip("a browser test (-short)")
	}
	shots := os.Getenv(ScreenshotsEnv)
	if shots != "" {
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	model := llmtest.NewServer(t, llmtest.WithChunkSize(6), llmtest.WithChunkDelay(2*time.Millisecond))
	f := start(t, serve.Options{Runner: agentRunner(t, model)})
	a := filepath.Join(f.dir, "notes.txt")
	os.WriteFile(a, []byte("the old line\n"), 0o644)
	in := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	model.Script(
		llmtest.Reply{Content: []llm.Block{llm.Text("I will **look around** first."),
			llm.ToolUse("t1", "Bash", in(map[string]string{"command": "echo hello-from-bash > out.txt && cat out.txt", "description": "Write and show a file"}))}},
		llmtest.Reply{Content: []llm.Block{llm.ToolUse("t2", "Read", in(map[string]string{"file_path": a}))}},
		llmtest.Reply{Content: []llm.Block{llm.ToolUse("t3", "Edit", in(map[string]string{"file_path": a, "old_string": "the old line", "new_string": "the new line"}))}},
		llmtest.Reply{Content: []llm.Block{llm.ToolUse("t4", "AskUserQuestion", in(map[string]any{"questions": []map[string]any{{
			"question": "Which colour should the report use?", "header": "Colour", "multiSelect": false,
			"options": []map[string]string{{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}}}}}))}},
		llmtest.TextReply("All done: the report is blue."),
	)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(bctx, 3*time.Minute)
	defer cancel()
	p := &page{t: t, ctx: ctx, base: f.url, shot: shots}

	// Log in.
	p.run("login page", chromedp.Navigate(f.url+"/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	p.both("login", "#token", "button[type=submit]")
	p.run("log in", chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Submit(chromedp.CSS("#token")))
	p.wait("the runs page", `document.querySelector('h1')?.textContent === 'Runs'`)

	// Start a run.
	p.run("new run", chromedp.Navigate(f.url+"/new"), chromedp.WaitVisible(chromedp.CSS("#prompt")),
		chromedp.SendKeys(chromedp.CSS("#prompt"), "Tidy the notes"), chromedp.SetValue(chromedp.CSS("#dir"), f.dir))
	p.both("new", "#prompt", "#dir", "#mode", "#new-run button.primary")
	p.run("start", chromedp.Submit(chromedp.CSS("#prompt")))

	// Text and a tool card stream in; the Bash call waits for approval.
	p.wait("the assistant's text", `[...document.querySelectorAll('#conversation .msg.assistant strong')].some(e => e.textContent === 'look around')`)
	p.wait("the Bash card", `!!document.querySelector('#conversation article.tool[data-tool="Bash"] pre.cmd')`)
	p.wait("the Bash ask", `!!document.querySelector('#asks form[data-kind="permission"] button[value="allow_once"]')`)
	p.wait("the status", `document.querySelector('#runhead .status')?.textContent === 'needs you'`)
	p.both("run-ask", "#runhead .status", "#asks button[value=allow_once]", "#asks button[value=deny]", "#conversation article.tool")
	p.run("the needs-you list", chromedp.Navigate(f.url+"/asks"), chromedp.WaitVisible(chromedp.CSS("#needs .ask")))
	p.both("asks", "#needs .ask", "#nav-asks .count")
	p.run("back to the run", chromedp.NavigateBack())
	p.wait("the ask again", `!!document.querySelector('#asks button[value="allow_once"]')`)
	p.tabTo(`#asks button[value="allow_once"]`, 40)
	p.run("approve from the keyboard", chromedp.KeyEvent(kb.Enter))
	p.wait("the command's output", `[...document.querySelectorAll('article.tool[data-tool="Bash"] pre.output')].some(e => e.textContent.includes('hello-from-bash'))`)

	// The Edit's diff, denied with a message.
	p.wait("the Edit ask's diff", `!!document.querySelector('#asks .diff .del') && document.querySelector('#asks .diff .del').textContent.includes('the old line') && document.querySelector('#asks .diff .add').textContent.includes('the new line')`)
	p.wait("the Edit card's diff", `!!document.querySelector('article.tool[data-tool="Edit"] .diff .add')`)
	p.both("run-edit", "#asks .diff", "#asks textarea[name=message]", "#asks button[value=deny]")
	p.run("deny", chromedp.SendKeys(chromedp.CSS(`#asks textarea[name="message"]`), "keep notes.txt as it is"))
	p.click(`#asks button[value="deny"]`)

	// The question.
	p.wait("the question", `!!document.querySelector('#asks form[data-kind="question"] input[value="Blue"]')`)
	p.both("run-question", "#asks fieldset", "#asks input[value=Blue]")
	p.click(`#asks input[value="Blue"]`)
	p.click(`#asks form[data-kind="question"] button[type="submit"]`)
	p.wait("the result", `!!document.querySelector('#conversation .result.done') && document.querySelector('#runhead .status')?.textContent === 'succeeded'`)
	p.both("run", "#runhead .status", "#conversation .result", "article.tool[data-tool=Edit]")

	reqs := model.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d model requests", len(reqs))
	}
	denied, _ := json.Marshal(reqs[3].ToolResults())
	if !strings.Contains(string(denied), "keep notes.txt as it is") {
		t.Errorf("the model did not receive the denial's message: %s", denied)
	}
	answered, _ := json.Marshal(reqs[4].ToolResults())
	if !strings.Contains(string(answered), "Blue") {
		t.Errorf("the model did not receive the answer: %s", answered)
	}
	if b, _ := os.ReadFile(a); string(b) != "the old line\n" {
		t.Errorf("the denied edit ran: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "out.txt")); string(b) != "hello-from-bash\n" {
		t.Errorf("the approved command did not run: %q", b)
	}

	// The runs list.
	p.run("runs", chromedp.Navigate(f.url+"/"), chromedp.WaitVisible(chromedp.CSS("table.runs")))
	p.both("runs", "table.runs tr.run .status", "nav a[href='/new']", "#filters select[name=status]")

	// A subagent's conversation nests under its Agent call.
	model.Script(
		llmtest.Reply{Content: []llm.Block{llm.ToolUse("t9", "Agent", in(map[string]string{"description": "Summarise the notes", "prompt": "Say what notes.txt holds."}))}},
		llmtest.TextReply("The notes hold *one* line."),
		llmtest.TextReply("Delegated."),
	)
	p.run("a delegating run", chromedp.Navigate(f.url+"/new"), chromedp.WaitVisible(chromedp.CSS("#prompt")),
		chromedp.SendKeys(chromedp.CSS("#prompt"), "Delegate"), chromedp.SetValue(chromedp.CSS("#dir"), f.dir),
		chromedp.Submit(chromedp.CSS("#prompt")))
	p.wait("the subagent's text under its call", `[...document.querySelectorAll('article.tool[data-tool="Agent"] > .children .msg.assistant em')].some(e => e.textContent === 'one')`)
	p.wait("the delegating run's result", `!!document.querySelector('#conversation > .result.done')`)
	p.both("run-subagent", "article.tool[data-tool=Agent] .children .msg", "#conversation > .result")

	// Cancel a run that waits on a slow model.
	model.Script(llmtest.Reply{Content: []llm.Block{llm.Text("late")}, HeaderDelay: time.Minute})
	p.run("second run", chromedp.Navigate(f.url+"/new"), chromedp.WaitVisible(chromedp.CSS("#prompt")),
		chromedp.SendKeys(chromedp.CSS("#prompt"), "Think slowly"), chromedp.SetValue(chromedp.CSS("#dir"), f.dir),
		chromedp.Submit(chromedp.CSS("#prompt")))
	p.wait("the cancel button", `!!document.querySelector('#runhead button.danger') && document.querySelector('#runhead .status')?.textContent === 'running'`)
	p.click(`#runhead button.danger`)
	p.wait("cancelled", `document.querySelector('#runhead .status')?.textContent === 'cancelled'`)

	// Add a cron job: the schedule's next fires show as it is typed.
	p.run("schedules", chromedp.Navigate(f.url+"/schedules"), chromedp.WaitVisible(chromedp.CSS("#cron")),
		chromedp.SendKeys(chromedp.CSS("#cron"), "0 0 31 2 *"))
	p.wait("a refused schedule", `!!document.querySelector('#preview .error')`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector('#cron').value = '') === ''`)); err != nil {
		t.Fatal(err)
	}
	p.run("a good schedule", chromedp.SendKeys(chromedp.CSS("#cron"), "30 9 * * 1-5"))
	p.wait("the next fires", `document.querySelectorAll('#preview li').length === 5`)
	p.run("fill the job", chromedp.SendKeys(chromedp.CSS("#job-prompt"), "Write the weekly notes"),
		chromedp.SetValue(chromedp.CSS("#job-dir"), f.dir))
	p.both("schedules-add", "#cron", "#preview li", "#add-job button.primary")
	p.click(`#add-job button.primary`)
	p.wait("the job", `[...document.querySelectorAll('tr.job')].some(r => r.textContent.includes('Write the weekly notes') && r.textContent.includes('09:30'))`)
	p.both("schedules", "tr.job code", "tr.job button.danger")

	// Pause the job: it shows paused, no next fire, and a Resume button;
	// resume it and its next fire is back.
	p.click(`tr.job button.pause`)
	p.wait("the job paused", `(() => { const r = document.querySelector('tr.job'); return !!r && r.classList.contains('paused') && r.querySelector('.st-paused')?.textContent === 'paused' && !r.textContent.includes('09:30') && !!r.querySelector('button.resume'); })()`)
	p.both("schedules-paused", "tr.job .st-paused", "tr.job button.resume")
	p.click(`tr.job button.resume`)
	p.wait("the job resumed", `(() => { const r = document.querySelector('tr.job'); return !!r && !r.classList.contains('paused') && r.textContent.includes('09:30') && !!r.querySelector('button.pause'); })()`)
}
