package console

import (
	"fmt"
	"html"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/tool"
)

// The pages are written by Go code, not html/template: a program that
// executes templates keeps every exported method of every type it links
// (text/template calls reflect's MethodByName), which made the gantry
// binary two thirds larger. Every dynamic value goes through [out.f]'s
// escaping; only literal markup is written raw.

// out builds a page.
type out struct {
	strings.Builder
	now time.Time
}

// s writes trusted markup as it is.
func (o *out) s(markup string) { o.WriteString(markup) }

// f writes format with its arguments, each one that is not a number or a
// boolean formatted with %v and HTML-escaped (safe in text and in quoted
// attribute values).
func (o *out) f(format string, args ...any) {
	for i, a := range args {
		switch a.(type) {
		case int, int64, float64, bool:
		default:
			args[i] = html.EscapeString(fmt.Sprint(a))
		}
	}
	fmt.Fprintf(o, format, args...)
}

// attr writes name when on (a boolean attribute, with its leading space).
func (o *out) attr(name string, on bool) {
	if on {
		o.s(" " + name)
	}
}

func (o *out) age(t time.Time) string { return age(o.now, t) }

func cost(f float64) string { return fmt.Sprintf("$%.4f", f) }

func statusLabel(s runqueue.Status) string {
	if s == runqueue.StatusWaiting {
		return "needs you"
	}
	return string(s)
}

func (o *out) status(s runqueue.Status) {
	o.f(`<span class="status st-%s">%s</span>`, s, statusLabel(s))
}

func (o *out) top(p page) {
	o.s("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"color-scheme\" content=\"light dark\">\n")
	if p.CSRF != "" {
		o.f("<meta name=\"csrf-token\" content=\"%s\">\n", p.CSRF)
	}
	o.f("<title>%s · gantry</title>\n", p.Title)
	o.s("<link rel=\"stylesheet\" href=\"/static/console.css\">\n<script type=\"module\" src=\"/static/console.js\"></script>\n</head>\n<body>\n" +
		"<a class=\"skip\" href=\"#main\">Skip to content</a>\n<header class=\"top\">\n  <a class=\"brand\" href=\"/\">gantry</a>\n")
	if p.CSRF != "" {
		cur := func(nav string) string {
			if p.Nav == nav {
				return ` aria-current="page"`
			}
			return ""
		}
		o.s(`  <nav aria-label="Sections">` + "\n")
		o.s(`    <a href="/"` + cur("runs") + ">Runs</a>\n")
		o.s(`    <a href="/asks" id="nav-asks"` + cur("asks") + ">Needs you")
		if p.NeedsYou > 0 {
			o.f(` <span class="count" aria-label="%d waiting">%d</span>`, p.NeedsYou, p.NeedsYou)
		}
		o.s("</a>\n")
		o.s(`    <a href="/new"` + cur("new") + ">New run</a>\n")
		o.s(`    <a href="/schedules"` + cur("schedules") + ">Schedules</a>\n  </nav>\n")
		o.f(`  <form method="post" action="/logout" class="logout"><input type="hidden" name="csrf" value="%s"><button type="submit" class="link">Log out</button></form>`+"\n", p.CSRF)
	}
	o.s("</header>\n<main id=\"main\">\n")
	if p.Error != "" {
		o.f(`<p class="error" role="alert">%s</p>`+"\n", p.Error)
	}
}

func (o *out) bottom() { o.s("</main>\n</body>\n</html>\n") }

func renderError(o *out, p page) {
	o.top(p)
	o.s("<h1>Something went wrong</h1>\n<p><a href=\"/\">Back to the runs</a></p>\n")
	o.bottom()
}

func renderLogin(o *out, d loginData) {
	o.top(d.page)
	o.s("<h1>Log in</h1>\n<form method=\"post\" action=\"/login\" class=\"card login\">\n")
	o.f(`  <input type="hidden" name="next" value="%s">`+"\n", d.Next)
	o.s(`  <label for="token">API token</label>
  <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
  <p class="hint">The token of this <code>gantry serve</code>: the contents of its token file
  (<code>$GANTRY_HOME/serve.token</code> unless <code>--token-file</code> names another).
  It is exchanged for a session cookie and not kept by the browser.</p>
  <button type="submit" class="primary">Log in</button>
</form>
`)
	o.bottom()
}

func (o *out) options(values []string, selected string, label func(string) string) {
	for _, v := range values {
		o.f(`<option value="%s"`, v)
		o.attr("selected", v == selected)
		o.f(">%s</option>", label(v))
	}
}

func same(s string) string { return s }

func renderRuns(o *out, d runsData) {
	o.top(d.page)
	o.s("<h1>Runs</h1>\n<form method=\"get\" action=\"/\" class=\"filters\" id=\"filters\">\n")
	o.s("  <label>Status\n    <select name=\"status\"><option value=\"\">any</option>")
	o.options(d.Statuses, d.Status, func(s string) string { return statusLabel(runqueue.Status(s)) })
	o.s("</select></label>\n  <label>Origin\n    <select name=\"origin\"><option value=\"\">any</option>")
	o.options(d.Origins, d.Origin, same)
	o.s("</select></label>\n  <button type=\"submit\">Filter</button>\n</form>\n<div id=\"runs\" data-refresh=\"3000\">\n")
	if len(d.Runs) == 0 {
		o.s(`<p class="empty">No runs`)
		if d.Status != "" || d.Origin != "" {
			o.s(" match the filter")
		}
		o.s(`. <a href="/new">Start one</a>.</p>` + "\n")
	} else {
		o.s(`<table class="runs">
  <thead><tr><th scope="col">Status</th><th scope="col">Prompt</th><th scope="col">Origin</th><th scope="col">Project</th><th scope="col">Model</th><th scope="col">Cost</th><th scope="col">Age</th></tr></thead>
  <tbody>
`)
		for _, r := range d.Runs {
			o.f(`  <tr class="run" data-id="%s">`, r.ID)
			o.s(`<td data-label="Status">`)
			o.status(r.Status)
			o.f(`</td><td data-label="Prompt" class="prompt"><a href="/runs/%s">%s</a></td>`, url.PathEscape(r.ID), short(90, r.Request.Prompt))
			o.f(`<td data-label="Origin">%s</td><td data-label="Project" title="%s">%s</td><td data-label="Model">%s</td>`,
				r.Origin, r.Request.Dir, r.Project, r.Model)
			c := "—"
			if r.Result != nil {
				c = cost(r.Cost)
			}
			o.f(`<td data-label="Cost">%s</td><td data-label="Age"><time datetime="%s" title="%s">%s</time></td></tr>`+"\n",
				c, r.CreatedAt.Format(time.RFC3339), when(r.CreatedAt), o.age(r.CreatedAt))
		}
		o.s("  </tbody>\n</table>\n")
	}
	o.s("</div>\n")
	o.bottom()
}

func (o *out) runHead(d runData) {
	r := d.Run
	o.f(`<div id="runhead" data-status="%s">`+"\n", r.Status)
	o.f(`  <h1 class="prompt-title">%s</h1>`+"\n  <dl class=\"meta\">\n", short(140, r.Request.Prompt))
	o.s(`    <div><dt>Status</dt><dd>`)
	o.status(r.Status)
	o.s("</dd></div>\n")
	o.f(`    <div><dt>Origin</dt><dd>%s`, r.Origin)
	if id := r.Request.Origin.JobID; id != "" {
		o.f(" · job %s", id)
	}
	if id := r.Request.Origin.TriggerID; id != "" {
		o.f(" · trigger %s", id)
	}
	o.s("</dd></div>\n")
	mode := string(r.Request.Options.Mode)
	if mode == "" {
		mode = "the project's"
	}
	o.f(`    <div><dt>Project</dt><dd title="%s">%s</dd></div>`+"\n", r.Request.Dir, r.Request.Dir)
	o.f(`    <div><dt>Model</dt><dd>%s</dd></div>`+"\n"+`    <div><dt>Mode</dt><dd>%s</dd></div>`+"\n", r.Model, mode)
	o.f(`    <div><dt>Started</dt><dd><time title="%s">%s ago</time></dd></div>`+"\n", when(r.CreatedAt), o.age(r.CreatedAt))
	if res := r.Result; res != nil {
		o.f(`    <div><dt>Cost</dt><dd>%s · %d turns</dd></div>`+"\n", cost(res.CostUSD), res.NumTurns)
	}
	o.s("  </dl>\n")
	if r.Error != "" {
		o.f(`  <p class="error">%s</p>`+"\n", r.Error)
	}
	if !r.Status.Ended() {
		o.f(`  <form method="post" action="/runs/%s/cancel" class="inline" data-fetch>
    <input type="hidden" name="csrf" value="%s">
    <button type="submit" class="danger">Cancel run</button>
  </form>
`, url.PathEscape(r.ID), d.CSRF)
	}
	o.s("</div>\n")
}

func (o *out) live(d runData) {
	o.runHead(d)
	o.s("<div id=\"asks\" aria-live=\"polite\">\n")
	for _, a := range d.Asks {
		o.ask(a)
	}
	o.s("</div>\n")
	o.f(`<div hidden id="needs-count" data-n="%d"></div>`, d.NeedsYou)
}

func renderLive(o *out, d runData) { o.live(d) }

func renderRun(o *out, d runData) {
	o.top(d.page)
	o.f(`<div id="live" data-run="%s" data-ended="%t">`+"\n", d.Run.ID, d.Run.Status.Ended())
	o.live(d)
	o.s("</div>\n")
	o.f(`<section id="conversation" aria-label="Conversation" data-events="/runs/%s/events">`, url.PathEscape(d.Run.ID))
	o.s(`
  <noscript><p class="hint">The conversation streams in with JavaScript on; without it the page shows the run's state and asks (reload to update).</p></noscript>
</section>
`)
	o.bottom()
}

func renderAsks(o *out, d asksData) {
	o.top(d.page)
	o.s("<h1>Needs you</h1>\n<div id=\"needs\" data-refresh=\"3000\">\n")
	for _, rd := range d.Runs {
		r := rd.Run
		o.f(`<section class="card waiting">
  <h2><a href="/runs/%s">%s</a></h2>
  <p class="sub">%s · %s · %s ago</p>
`, url.PathEscape(r.ID), short(100, r.Request.Prompt), r.Origin, r.Project, o.age(r.CreatedAt))
		for _, a := range rd.Asks {
			o.ask(a)
		}
		o.s("</section>\n")
	}
	if len(d.Runs) == 0 {
		o.s(`<p class="empty">Nothing is waiting for you.</p>` + "\n")
	}
	o.s("</div>\n")
	o.bottom()
}

// ask writes the form of a pending ask, with the terminal's choices.
func (o *out) ask(a askView) {
	o.f(`<form method="post" action="/runs/%s/asks/%s" class="ask card" data-fetch data-ask="%s" data-kind="%s">`+"\n",
		url.PathEscape(a.RunID), url.PathEscape(a.ID), a.ID, a.Kind)
	o.f(`<input type="hidden" name="csrf" value="%s"><input type="hidden" name="back" value="%s">`+"\n", a.CSRF, a.Back)
	sub := func() {
		if a.Agent != "" {
			o.f(" <small>(subagent %s)</small>", a.Agent)
		}
	}
	switch {
	case a.Perm != nil:
		q := a.Perm
		o.f("  <h2>Allow <code>%s</code>?", q.ToolName)
		sub()
		o.s("</h2>\n")
		if q.Description != "" {
			o.f("  <p>%s</p>\n", q.Description)
		}
		pv := a.Preview
		if pv.Command != "" {
			o.f(`  <pre class="cmd"><span class="prompt-sign">$ </span>%s</pre>`+"\n", pv.Command)
		}
		if pv.Path != "" {
			o.f(`  <p class="path">%s`, pv.Path)
			if pv.ReplaceAll {
				o.s(" <small>(every occurrence)</small>")
			}
			o.s("</p>\n  <pre class=\"diff\">")
			for _, l := range a.Diff {
				o.f(`<span class="%s">%s %s</span>`, l.Class, l.Sign, l.Text)
			}
			o.s("</pre>\n")
		}
		if pv.URL != "" {
			o.f(`  <p class="path">%s</p>`+"\n", pv.URL)
		}
		if pv.Input != "" {
			o.f(`  <pre class="input">%s</pre>`+"\n", pv.Input)
		}
		if q.Reason != "" {
			o.f(`  <p class="reason">%s</p>`+"\n", q.Reason)
		}
		o.s(`  <div class="choices">
    <button type="submit" name="choice" value="allow_once" class="primary">Allow once</button>
`)
		if len(q.Suggestions) > 0 {
			o.f(`    <button type="submit" name="choice" value="allow_session">Allow for this session <small>(%s)</small></button>`+"\n",
				strings.Join(q.Suggestions, ", "))
			if len(q.Scopes) > 0 {
				o.s(`    <span class="always">
      <button type="submit" name="choice" value="allow_always">Always allow</button>
      <label>in <select name="scope">`)
				for _, sc := range q.Scopes {
					o.f(`<option value="%s">%s settings</option>`, sc, sc)
				}
				o.s("</select></label>\n    </span>\n")
			}
		}
		o.f(`  </div>
  <div class="deny">
    <label for="msg-%s">Tell the model why (with Deny)</label>
    <textarea id="msg-%s" name="message" rows="2" placeholder="e.g. use the test database instead"></textarea>
    <button type="submit" name="choice" value="deny" class="danger">Deny</button>
  </div>
`, a.ID, a.ID)
	case a.Question != nil:
		o.s("  <h2>The agent asks")
		sub()
		o.s("</h2>\n")
		for i, q := range a.Question.Questions {
			o.s("  <fieldset>\n    <legend>")
			if q.Header != "" {
				o.f(`<span class="chip">%s</span> `, q.Header)
			}
			o.f("%s</legend>\n", q.Question)
			kind := "radio"
			if q.MultiSelect {
				kind = "checkbox"
			}
			for _, op := range q.Options {
				o.f(`    <label class="option"><input type="%s" name="q%d" value="%s"><span><strong>%s</strong>`, kind, i, op.Label, op.Label)
				if op.Description != "" {
					o.f(" — %s", op.Description)
				}
				o.s("</span></label>\n")
				if op.Preview != "" {
					o.f(`    <pre class="input">%s</pre>`+"\n", op.Preview)
				}
			}
			o.f(`    <label class="other">Other: <input type="text" name="q%d_other" autocomplete="off"></label>`+"\n  </fieldset>\n", i)
		}
		o.s(`  <div class="choices"><button type="submit" class="primary">Answer</button></div>` + "\n")
	case a.Plan != nil:
		o.s("  <h2>Approve the plan?")
		sub()
		o.f("</h2>\n  <div class=\"md plan\">%s</div>\n", a.Plan.Plan)
		if a.Plan.PlanFile != "" {
			o.f(`  <p class="hint">Saved in %s</p>`+"\n", a.Plan.PlanFile)
		}
		ret := string(a.Plan.ReturnMode)
		if ret == "" {
			ret = string(tool.ModeDefault)
		}
		o.f(`  <div class="choices">
    <button type="submit" name="approve" value="yes" class="primary">Approve</button>
    <label>and continue in <select name="mode">
      <option value="">%s mode</option>
      <option value="acceptEdits">acceptEdits (edits run without asking)</option>
    </select></label>
  </div>
  <div class="deny">
    <label for="fb-%s">What should change (keeps planning)</label>
    <textarea id="fb-%s" name="feedback" rows="2"></textarea>
    <button type="submit" name="approve" value="no" class="danger">Keep planning</button>
  </div>
`, ret, a.ID, a.ID)
	case a.Elicit != nil:
		e := a.Elicit
		o.f("  <h2>The MCP server <code>%s</code> asks</h2>\n  <p>%s</p>\n", e.Server, e.Message)
		if e.URL != "" {
			o.f(`  <p class="path">%s</p>`+"\n", e.URL)
		}
		o.s(`  <p class="hint">Forms of MCP servers are answered through the API; here you can decline or cancel.</p>` + "\n  <div class=\"choices\">\n")
		if e.URL != "" {
			o.s(`    <button type="submit" name="action" value="accept" class="primary">Done</button>` + "\n")
		}
		o.s(`    <button type="submit" name="action" value="decline">Decline</button>
    <button type="submit" name="action" value="cancel" class="danger">Cancel</button>
  </div>
`)
	case a.Trust != nil:
		tr := a.Trust
		o.f("  <h2>Trust the folder?</h2>\n  <p class=\"path\">%s</p>\n", tr.Dir)
		for file, what := range tr.Ignored {
			o.f(`  <p class="hint">%s: %s</p>`+"\n", file, strings.Join(what, ", "))
		}
		for _, sv := range tr.Servers {
			o.f(`  <p class="hint">MCP server: %s</p>`+"\n", sv)
		}
		o.s(`  <div class="choices">
    <button type="submit" name="trust" value="yes" class="primary">Trust</button>
    <button type="submit" name="trust" value="no" class="danger">Do not trust</button>
  </div>
`)
	}
	o.s(`<p class="ask-error error" hidden role="alert"></p>` + "\n</form>\n")
}

func (o *out) projects(dirs []string) {
	o.s(`<datalist id="projects">`)
	for _, d := range dirs {
		o.f(`<option value="%s">`, d)
	}
	o.s("</datalist>\n")
}

func (o *out) modeSelect(selected string) {
	o.s(`<select name="mode" id="mode"><option value="">the project's settings</option>`)
	for _, m := range modes {
		o.f(`<option value="%s"`, m)
		o.attr("selected", string(m) == selected)
		o.f(">%s</option>", m)
	}
	o.s("</select>")
}

func renderNew(o *out, d newData) {
	o.top(d.page)
	o.f(`<h1>New run</h1>
<form method="post" action="/new" class="card form" id="new-run">
  <input type="hidden" name="csrf" value="%s">
  <label for="prompt">Prompt</label>
  <textarea id="prompt" name="prompt" rows="5" required>%s</textarea>
  <label for="dir">Project directory</label>
  <input id="dir" name="dir" list="projects" value="%s" required placeholder="/absolute/path" autocomplete="off" spellcheck="false">
`, d.CSRF, d.Prompt, d.Dir)
	o.projects(d.Projects)
	o.s(`  <p class="hint">One of the server's projects (the directories of its runs, jobs and triggers), or another absolute path on the server.</p>
  <div class="row">
    <label>Permission mode
      `)
	o.modeSelect(d.Mode)
	o.f(`</label>
    <label>Model
      <input name="model" id="model" value="%s" placeholder="the server's default" autocomplete="off" spellcheck="false"></label>
  </div>
  <button type="submit" class="primary">Start</button>
</form>
`, d.Model)
	o.bottom()
}

func (o *out) lastRun(r *runqueue.Run) {
	if r == nil {
		o.s("—")
		return
	}
	o.f(`<a href="/runs/%s">`, url.PathEscape(r.ID))
	o.status(r.Status)
	o.f("</a> %s ago", o.age(r.CreatedAt))
}

// pauseButton writes the Pause (or, paused, Resume) form of the job or
// trigger at path (escaped).
func (o *out) pauseButton(path string, paused bool, csrf string) {
	verb, label := "pause", "Pause"
	if paused {
		verb, label = "resume", "Resume"
	}
	o.f(`<form method="post" action="%s/%s" class="inline"><input type="hidden" name="csrf" value="%s"><button type="submit" class="%s">%s</button></form>`,
		path, verb, csrf, verb, label)
}

func renderSchedules(o *out, d schedulesData) {
	o.top(d.page)
	o.s("<h1>Schedules</h1>\n<section aria-labelledby=\"jobs-h\">\n<h2 id=\"jobs-h\">Cron jobs</h2>\n")
	if len(d.Jobs) == 0 {
		o.s(`<p class="empty">No cron jobs.</p>` + "\n")
	} else {
		o.s(`<table class="runs jobs">
  <thead><tr><th scope="col">Schedule</th><th scope="col">Prompt</th><th scope="col">Project</th><th scope="col">Next fire</th><th scope="col">Last run</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
  <tbody>
`)
		for _, j := range d.Jobs {
			cls := "job"
			if j.Paused {
				cls = "job paused"
			}
			o.f(`  <tr id="job-%s" class="%s"><td data-label="Schedule"><code>%s</code>`, j.ID, cls, j.Cron)
			if j.Location != "" {
				o.f(" <small>%s</small>", j.Location)
			}
			if !j.Recurring {
				o.s(" <small>once</small>")
			}
			if j.TriggerID != "" {
				o.f(" <small>trigger %s</small>", j.TriggerID)
			}
			o.f(`</td><td data-label="Prompt" class="prompt">%s</td><td data-label="Project" title="%s">%s</td><td data-label="Next fire">`,
				short(80, j.Prompt), j.Dir, filepath.Base(j.Dir))
			if j.Paused {
				o.s(`<span class="status st-paused">paused</span>`)
			} else {
				o.s(html.EscapeString(when(j.NextScheduled)))
			}
			if !j.ExpiresAt.IsZero() {
				o.f("<br><small>expires %s</small>", when(j.ExpiresAt))
			}
			o.s(`</td><td data-label="Last run">`)
			o.lastRun(j.LastRun)
			o.s(`</td><td class="actions">`)
			o.pauseButton("/jobs/"+url.PathEscape(j.ID), j.Paused, d.CSRF)
			o.s(" ")
			if j.TriggerID == "" {
				o.f(`<form method="post" action="/jobs/%s/delete" class="inline" data-confirm="Remove this cron job?"><input type="hidden" name="csrf" value="%s"><button type="submit" class="danger">Remove</button></form>`,
					url.PathEscape(j.ID), d.CSRF)
			}
			o.s("</td></tr>\n")
		}
		o.s("  </tbody>\n</table>\n")
	}
	o.s("</section>\n\n")

	fm := d.Form
	o.f(`<section aria-labelledby="add-h" class="card form">
<h2 id="add-h">Add a cron job</h2>
<form method="post" action="/jobs" id="add-job">
  <input type="hidden" name="csrf" value="%s">
  <div class="row">
    <label>Schedule <small>(minute hour day month weekday)</small>
      <input name="cron" id="cron" value="%s" required placeholder="0 9 * * 1-5" autocomplete="off" spellcheck="false" aria-describedby="preview"></label>
    <label>Time zone
      <input name="timezone" id="timezone" value="%s" placeholder="local (or e.g. Europe/Paris)" autocomplete="off" spellcheck="false"></label>
  </div>
  <div id="preview" class="preview" aria-live="polite">`, d.CSRF, fm.Cron, fm.Timezone)
	if d.PreviewError != "" {
		o.f(`<p class="error">%s</p>`, d.PreviewError)
	}
	if len(d.Preview) > 0 {
		o.s("<p>Next fires:</p><ol>")
		for _, t := range d.Preview {
			o.f("<li>%s</li>", when(t))
		}
		o.s("</ol>")
	}
	o.f(`</div>
  <label for="job-prompt">Prompt</label>
  <textarea id="job-prompt" name="prompt" rows="3" required>%s</textarea>
  <label for="job-dir">Project directory</label>
  <input id="job-dir" name="dir" list="projects" value="%s" required autocomplete="off" spellcheck="false">
`, fm.Prompt, fm.Dir)
	o.projects(d.Projects)
	o.s("  <div class=\"row\">\n    <label>Permission mode\n      ")
	o.modeSelect(fm.Mode)
	o.f(`</label>
    <label>Model <input name="model" value="%s" placeholder="the server's default" autocomplete="off"></label>
    <label>Expires after <input name="lifetime" value="%s" placeholder="168h (0 = never)" autocomplete="off"></label>
  </div>
  <label class="check"><input type="checkbox" name="once" value="1"`, fm.Model, fm.Lifetime)
	o.attr("checked", fm.Once)
	o.s(`> Fire once (at the next match)</label>
  <div class="choices">
    <button type="submit" class="primary">Add job</button>
    <button type="submit" name="action" value="preview" formnovalidate>Preview</button>
  </div>
</form>
</section>

<section aria-labelledby="triggers-h">
<h2 id="triggers-h">Triggers</h2>
`)
	if len(d.Triggers) == 0 {
		o.s(`<p class="empty">No triggers. Create them with the <code>RemoteTrigger</code> tool or <code>POST /v1/triggers</code>.</p>` + "\n")
	} else {
		o.s(`<table class="runs triggers">
  <thead><tr><th scope="col">Name</th><th scope="col">Prompt</th><th scope="col">Project</th><th scope="col">Schedule</th><th scope="col">Last run</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
  <tbody>
`)
		for _, t := range d.Triggers {
			o.f(`  <tr id="trigger-%s"><td data-label="Name"><strong>%s</strong>`, t.ID, t.Name)
			if t.Description != "" {
				o.f("<br><small>%s</small>", t.Description)
			}
			o.f(`</td><td data-label="Prompt" class="prompt">%s</td><td data-label="Project" title="%s">%s</td><td data-label="Schedule">`,
				short(80, t.Prompt), t.Dir, filepath.Base(t.Dir))
			if t.Cron != "" {
				o.f("<code>%s</code>", t.Cron)
				if t.Paused {
					o.s(` <span class="status st-paused">paused</span>`)
				}
			} else {
				o.s("on request")
			}
			o.s(`</td><td data-label="Last run">`)
			o.lastRun(t.LastRun)
			id := url.PathEscape(t.ID)
			o.f(`</td><td class="actions"><form method="post" action="/triggers/%s/run" class="inline"><input type="hidden" name="csrf" value="%s"><button type="submit">Run now</button></form>
      `, id, d.CSRF)
			if t.JobID != "" {
				o.pauseButton("/triggers/"+id, t.Paused, d.CSRF)
				o.s("\n      ")
			}
			o.f(`<form method="post" action="/triggers/%s/delete" class="inline" data-confirm="Remove this trigger?"><input type="hidden" name="csrf" value="%s"><button type="submit" class="danger">Remove</button></form></td></tr>
`, id, d.CSRF)
		}
		o.s("  </tbody>\n</table>\n")
	}
	o.s("</section>\n")
	o.bottom()
}
