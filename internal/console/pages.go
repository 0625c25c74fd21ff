package console

import (
	"cmp"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/internal/trigger"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

//go:embed static
var staticFS embed.FS

func (c *Console) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /static/{file}", c.static)
	m.HandleFunc("GET /login", c.loginPage)
	m.HandleFunc("POST /login", c.loginPost)
	m.HandleFunc("POST /logout", c.guard(func(w http.ResponseWriter, r *http.Request, _ *session) {
		c.logout(w, r)
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	}))
	m.HandleFunc("GET /{$}", c.guard(c.runsPage))
	m.HandleFunc("GET /runs/{id}", c.guard(c.runPage))
	m.HandleFunc("GET /runs/{id}/live", c.guard(c.runLive))
	m.HandleFunc("GET /runs/{id}/events", c.guard(c.runEvents))
	m.HandleFunc("POST /runs/{id}/asks/{ask}", c.guard(c.answer))
	m.HandleFunc("POST /runs/{id}/cancel", c.guard(c.cancel))
	m.HandleFunc("GET /asks", c.guard(c.asksPage))
	m.HandleFunc("GET /new", c.guard(c.newPage))
	m.HandleFunc("POST /new", c.guard(c.newPost))
	m.HandleFunc("GET /schedules", c.guard(c.schedulesPage))
	m.HandleFunc("GET /schedules/preview", c.guard(c.preview))
	m.HandleFunc("POST /jobs", c.guard(c.jobPost))
	m.HandleFunc("POST /jobs/{id}/delete", c.guard(c.jobDelete))
	m.HandleFunc("POST /jobs/{id}/pause", c.guard(c.pause("jobs", true)))
	m.HandleFunc("POST /jobs/{id}/resume", c.guard(c.pause("jobs", false)))
	m.HandleFunc("POST /triggers/{id}/run", c.guard(c.triggerRun))
	m.HandleFunc("POST /triggers/{id}/delete", c.guard(c.triggerDelete))
	m.HandleFunc("POST /triggers/{id}/pause", c.guard(c.pause("triggers", true)))
	m.HandleFunc("POST /triggers/{id}/resume", c.guard(c.pause("triggers", false)))
	c.mux = m
}

func (c *Console) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	b, err := fs.ReadFile(staticFS, "static/"+name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	tag, ok := c.etags.Load(name)
	if !ok {
		sum := sha256.Sum256(b)
		tag = `"` + hex.EncodeToString(sum[:8]) + `"`
		c.etags.Store(name, tag)
	}
	w.Header().Set("ETag", tag.(string))
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, time.Time{}, strings.NewReader(string(b)))
}

// page is what every page's layout needs.
type page struct {
	Title    string
	Nav      string
	CSRF     string
	NeedsYou int
	Error    string
	Now      time.Time
}

// render writes a page (status 0 = 200).
func (c *Console) render(w http.ResponseWriter, status int, write func(o *out)) {
	o := &out{now: c.now()}
	write(o)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if status != 0 {
		w.WriteHeader(status)
	}
	io.WriteString(w, o.String())
}

// base returns the layout data of a page.
func (c *Console) base(ctx context.Context, s *session, title, nav string) page {
	p := page{Title: title, Nav: nav, Now: c.now()}
	if s != nil {
		p.CSRF = s.csrf
		var rl serveapi.RunList
		if err := c.call(ctx, http.MethodGet, "/v1/runs?status=waiting&limit=1000", nil, &rl); err == nil {
			p.NeedsYou = len(rl.Runs)
		}
	}
	return p
}

// fail answers a failed action: JSON for the console's script, else an
// error page.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	status := http.StatusInternalServerError
	var ae *APIError
	if errors.As(err, &ae) {
		status = ae.Status
	} else {
		c.log.Error("console: action failed", "path", r.URL.Path, "err", err)
	}
	if wantsJSON(r) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": errText(err)})
		return
	}
	p := c.base(r.Context(), s, "Error", "")
	p.Error = errText(err)
	c.render(w, status, func(o *out) { renderError(o, p) })
}

func errText(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}

// done answers a successful action: 204 for the console's script, else a
// redirect to next.
func done(w http.ResponseWriter, r *http.Request, next string) {
	if wantsJSON(r) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"next": next})
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// localPath returns p when it is a path of this site, else def (an open
// redirect is refused). Browsers read a backslash as a slash and drop
// tabs and newlines, so a path with either is refused too.
func localPath(p, def string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.Contains(p, `\`) ||
		strings.IndexFunc(p, unicode.IsControl) >= 0 {
		return def
	}
	if u, err := url.Parse(p); err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return def
	}
	return p
}

// --- login ---

type loginData struct {
	page
	Next string
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	if _, s := c.session(r); s != nil {
		http.Redirect(w, r, localPath(r.URL.Query().Get("next"), "/"), http.StatusSeeOther)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	c.render(w, 0, func(o *out) {
		renderLogin(o, loginData{page: page{Title: "Log in"}, Next: localPath(r.URL.Query().Get("next"), "/")})
	})
}

func (c *Console) loginPost(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !c.sameOrigin(r) {
		c.log.Warn("console: cross-origin login refused", "origin", r.Header.Get("Origin"), "remote", r.RemoteAddr)
		http.Error(w, "403 forbidden: cross-origin request", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	next := localPath(r.PostFormValue("next"), "/")
	if !c.login(w, r, r.PostFormValue("token")) {
		d := loginData{page: page{Title: "Log in", Error: "That is not the server's token."}, Next: next}
		c.render(w, http.StatusUnauthorized, func(o *out) { renderLogin(o, d) })
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// --- runs ---

// runRow is one run as the lists show it.
type runRow struct {
	runqueue.Run
	Origin, Model, Project string
	Cost                   float64
}

func rowOf(r runqueue.Run) runRow {
	row := runRow{Run: r, Origin: cmp.Or(r.Request.Origin.Kind, runqueue.OriginAPI), Model: cmp.Or(r.Request.Options.Model, "default"),
		Project: filepath.Base(r.Request.Dir)}
	if r.Result != nil {
		row.Cost = r.Result.CostUSD
	}
	return row
}

type runsData struct {
	page
	Runs           []runRow
	Status, Origin string
	Statuses       []string
	Origins        []string
}

var (
	allStatuses = []string{"queued", "running", "waiting", "succeeded", "failed", "cancelled", "lost"}
	allOrigins  = []string{runqueue.OriginAPI, runqueue.OriginCron, runqueue.OriginTrigger, runqueue.OriginCLI}
)

func (c *Console) runsPage(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	d := runsData{page: c.base(r.Context(), s, "Runs", "runs"), Status: q.Get("status"), Origin: q.Get("origin"),
		Statuses: allStatuses, Origins: allOrigins}
	v := url.Values{"limit": {"200"}}
	if slices.Contains(allStatuses, d.Status) {
		v.Set("status", d.Status)
	}
	if slices.Contains(allOrigins, d.Origin) {
		v.Set("origin", d.Origin)
	}
	var rl serveapi.RunList
	if err := c.call(r.Context(), http.MethodGet, "/v1/runs?"+v.Encode(), nil, &rl); err != nil {
		c.fail(w, r, s, err)
		return
	}
	for _, run := range rl.Runs {
		d.Runs = append(d.Runs, rowOf(run))
	}
	c.render(w, 0, func(o *out) { renderRuns(o, d) })
}

type runData struct {
	page
	Run  runRow
	Asks []askView
}

func (c *Console) getRun(ctx context.Context, id string) (runqueue.Run, error) {
	var run runqueue.Run
	err := c.call(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(id), nil, &run)
	return run, err
}

func (c *Console) runPage(w http.ResponseWriter, r *http.Request, s *session) {
	run, err := c.getRun(r.Context(), r.PathValue("id"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := runData{page: c.base(r.Context(), s, "Run "+run.ID, "runs"), Run: rowOf(run), Asks: asksOf(run, s.csrf, "/runs/"+run.ID)}
	c.render(w, 0, func(o *out) { renderRun(o, d) })
}

// runLive renders the parts of a run page that change (its head and
// asks), for the page's script to swap in.
func (c *Console) runLive(w http.ResponseWriter, r *http.Request, s *session) {
	run, err := c.getRun(r.Context(), r.PathValue("id"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, 0, func(o *out) {
		renderLive(o, runData{page: c.base(r.Context(), s, "", "runs"), Run: rowOf(run), Asks: asksOf(run, s.csrf, "/runs/"+run.ID)})
	})
}

// runEvents streams a run's events: the API's SSE stream, behind the
// console's login (Last-Event-ID resumes it).
func (c *Console) runEvents(w http.ResponseWriter, r *http.Request, _ *session) {
	r2 := r.Clone(r.Context())
	r2.URL = &url.URL{Path: "/v1/runs/" + url.PathEscape(r.PathValue("id")) + "/events"}
	r2.RequestURI = ""
	r2.Header.Set("Accept", "text/event-stream")
	c.o.API.ServeHTTP(w, r2)
}

func (c *Console) cancel(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	if err := c.call(r.Context(), http.MethodPost, "/v1/runs/"+url.PathEscape(id)+"/cancel", nil, nil); err != nil {
		c.fail(w, r, s, err)
		return
	}
	done(w, r, "/runs/"+url.PathEscape(id))
}

// --- asks ---

// askView is a pending ask as a form shows it.
type askView struct {
	RunID string
	runqueue.Ask
	// CSRF and Back (the page to return to without the script) go into
	// the form.
	CSRF, Back string
	Agent      string
	// Permission
	Perm    *interaction.PermissionRequest
	Preview interaction.CallPreview
	Diff    []diffLine
	// Question, Plan, Elicitation, Trust
	Question *interaction.QuestionRequest
	Plan     *interaction.PlanRequest
	Elicit   *interaction.ElicitationRequest
	Trust    *interaction.TrustRequest
}

// diffLine is one line of a rendered change: Sign is "-" or "+", Class
// its style.
type diffLine struct{ Sign, Class, Text string }

func diffOf(removed, added string) []diffLine {
	var d []diffLine
	if removed != "" {
		for _, l := range strings.Split(strings.TrimSuffix(removed, "\n"), "\n") {
			d = append(d, diffLine{"-", "del", l})
		}
	}
	if added != "" {
		for _, l := range strings.Split(strings.TrimSuffix(added, "\n"), "\n") {
			d = append(d, diffLine{"+", "add", l})
		}
	}
	return d
}

func asksOf(run runqueue.Run, csrf, back string) []askView {
	var out []askView
	for _, a := range run.Asks {
		v := askView{RunID: run.ID, Ask: a, CSRF: csrf, Back: back}
		switch q := a.Request.(type) {
		case *interaction.PermissionRequest:
			v.Perm, v.Agent = q, q.Agent
			v.Preview = interaction.Preview(q.ToolName, q.Input)
			v.Diff = diffOf(v.Preview.Removed, v.Preview.Added)
		case *interaction.QuestionRequest:
			v.Question, v.Agent = q, q.Agent
		case *interaction.PlanRequest:
			v.Plan, v.Agent = q, q.Agent
		case *interaction.ElicitationRequest:
			v.Elicit, v.Agent = q, q.Agent
		case *interaction.TrustRequest:
			v.Trust = q
		}
		out = append(out, v)
	}
	return out
}

type asksData struct {
	page
	Runs []runData
}

func (c *Console) asksPage(w http.ResponseWriter, r *http.Request, s *session) {
	d := asksData{page: c.base(r.Context(), s, "Needs you", "asks")}
	var rl serveapi.RunList
	if err := c.call(r.Context(), http.MethodGet, "/v1/runs?status=waiting&limit=1000", nil, &rl); err != nil {
		c.fail(w, r, s, err)
		return
	}
	for _, run := range rl.Runs {
		d.Runs = append(d.Runs, runData{page: page{CSRF: s.csrf}, Run: rowOf(run), Asks: asksOf(run, s.csrf, "/asks")})
	}
	c.render(w, 0, func(o *out) { renderAsks(o, d) })
}

// answer turns an ask's form into the API's answer of its kind.
func (c *Console) answer(w http.ResponseWriter, r *http.Request, s *session) {
	id, askID := r.PathValue("id"), r.PathValue("ask")
	run, err := c.getRun(r.Context(), id)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	var ask *runqueue.Ask
	for i := range run.Asks {
		if run.Asks[i].ID == askID {
			ask = &run.Asks[i]
		}
	}
	if ask == nil {
		c.fail(w, r, s, &APIError{Status: http.StatusNotFound, Code: serveapi.CodeNotFound,
			Message: "this question was answered already, timed out, or the run ended"})
		return
	}
	f := r.PostForm
	var body any
	switch q := ask.Request.(type) {
	case *interaction.PermissionRequest:
		a := interaction.PermissionAnswer{Choice: interaction.Choice(f.Get("choice"))}
		if a.Choice == interaction.Deny {
			a.Message = strings.TrimSpace(f.Get("message"))
		}
		if a.Choice == interaction.AllowAlways {
			a.Scope = settingsScope(f.Get("scope"))
		}
		body = a
	case *interaction.QuestionRequest:
		a := interaction.QuestionAnswer{Answers: map[string]string{}}
		for i, qq := range q.Questions {
			key := "q" + strconv.Itoa(i)
			var labels []string
			for _, l := range f[key] {
				if slices.ContainsFunc(qq.Options, func(o interaction.Option) bool { return o.Label == l }) {
					labels = append(labels, l)
				}
			}
			if other := strings.TrimSpace(f.Get(key + "_other")); other != "" {
				if !qq.MultiSelect {
					labels = nil
				}
				labels = append(labels, other)
			}
			if len(labels) > 0 {
				a.Answers[qq.Question] = interaction.JoinLabels(labels)
			}
		}
		body = a
	case *interaction.PlanRequest:
		a := interaction.PlanAnswer{Approved: f.Get("approve") == "yes"}
		if a.Approved {
			a.Mode = tool.Mode(f.Get("mode"))
		} else {
			a.Feedback = strings.TrimSpace(f.Get("feedback"))
		}
		body = a
	case *interaction.ElicitationRequest:
		body = interaction.ElicitationAnswer{Action: f.Get("action")}
	case *interaction.TrustRequest:
		body = interaction.TrustAnswer{Trust: f.Get("trust") == "yes"}
	default:
		c.fail(w, r, s, fmt.Errorf("console: asks of kind %s cannot be answered here", ask.Kind))
		return
	}
	if err := c.call(r.Context(), http.MethodPost, "/v1/runs/"+url.PathEscape(id)+"/asks/"+url.PathEscape(askID), body, nil); err != nil {
		c.fail(w, r, s, err)
		return
	}
	done(w, r, localPath(f.Get("back"), "/runs/"+url.PathEscape(id)))
}

// --- start a run ---

type newData struct {
	page
	Prompt, Dir, Mode, Model string
	Projects                 []string
	Modes                    []tool.Mode
}

// modes are the permission modes a console run may ask for (the API
// refuses bypassPermissions where the CLI does).
var modes = []tool.Mode{tool.ModeDefault, tool.ModeAcceptEdits, tool.ModePlan, tool.ModeDontAsk}

func (c *Console) newPage(w http.ResponseWriter, r *http.Request, s *session) {
	d := newData{page: c.base(r.Context(), s, "New run", "new"), Projects: c.projects(r.Context()), Modes: modes}
	d.Dir = r.URL.Query().Get("dir")
	if d.Dir == "" && len(d.Projects) > 0 {
		d.Dir = d.Projects[0]
	}
	c.render(w, 0, func(o *out) { renderNew(o, d) })
}

func (c *Console) newPost(w http.ResponseWriter, r *http.Request, s *session) {
	f := r.PostForm
	req := runqueue.Request{Prompt: strings.TrimSpace(f.Get("prompt")), Dir: strings.TrimSpace(f.Get("dir")),
		Options: runqueue.Options{Model: strings.TrimSpace(f.Get("model")), Mode: tool.Mode(f.Get("mode"))}}
	var run runqueue.Run
	if err := c.call(r.Context(), http.MethodPost, "/v1/runs", req, &run); err != nil {
		if wantsJSON(r) {
			c.fail(w, r, s, err)
			return
		}
		d := newData{page: c.base(r.Context(), s, "New run", "new"), Projects: c.projects(r.Context()), Modes: modes,
			Prompt: req.Prompt, Dir: req.Dir, Mode: string(req.Options.Mode), Model: req.Options.Model}
		d.Error = errText(err)
		c.render(w, http.StatusBadRequest, func(o *out) { renderNew(o, d) })
		return
	}
	done(w, r, "/runs/"+url.PathEscape(run.ID))
}

// projects are the directories the server knows: those of its recent
// runs, jobs and triggers, sorted.
func (c *Console) projects(ctx context.Context) []string {
	seen := map[string]bool{}
	var rl serveapi.RunList
	if c.call(ctx, http.MethodGet, "/v1/runs?limit=500", nil, &rl) == nil {
		for _, r := range rl.Runs {
			seen[r.Request.Dir] = true
		}
	}
	var jl serveapi.JobList
	if c.call(ctx, http.MethodGet, "/v1/jobs", nil, &jl) == nil {
		for _, j := range jl.Jobs {
			seen[j.Dir] = true
		}
	}
	var tl triggerList
	if c.call(ctx, http.MethodGet, "/v1/triggers", nil, &tl) == nil {
		for _, t := range tl.Triggers {
			seen[t.Dir] = true
		}
	}
	delete(seen, "")
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

type triggerList struct {
	Triggers []trigger.Trigger `json:"triggers"`
}

// --- schedules ---

type jobRow struct {
	store.CronJob
	Model   string
	LastRun *runqueue.Run
}

type triggerRow struct {
	trigger.Trigger
	LastRun *runqueue.Run
	// Paused: the trigger's schedule (its job) is paused.
	Paused bool
}

type schedulesData struct {
	page
	Jobs     []jobRow
	Triggers []triggerRow
	Projects []string
	Modes    []tool.Mode
	// The add form.
	Form    jobForm
	Preview []time.Time
	// PreviewError says why the form's schedule is refused.
	PreviewError string
}

type jobForm struct {
	Cron, Timezone, Prompt, Dir, Model, Mode, Lifetime string
	Once                                               bool
}

func (c *Console) schedulesData(ctx context.Context, s *session) (schedulesData, error) {
	d := schedulesData{page: c.base(ctx, s, "Schedules", "schedules"), Projects: c.projects(ctx), Modes: modes}
	var jl serveapi.JobList
	if err := c.call(ctx, http.MethodGet, "/v1/jobs", nil, &jl); err != nil {
		return d, err
	}
	var tl triggerList
	if err := c.call(ctx, http.MethodGet, "/v1/triggers", nil, &tl); err != nil {
		return d, err
	}
	// The last run of each job and trigger, from one listing.
	last := map[string]runqueue.Run{}
	for _, origin := range []string{runqueue.OriginCron, runqueue.OriginTrigger} {
		var rl serveapi.RunList
		if err := c.call(ctx, http.MethodGet, "/v1/runs?limit=1000&origin="+origin, nil, &rl); err != nil {
			return d, err
		}
		for _, r := range rl.Runs { // newest first
			k := origin + ":" + cmp.Or(r.Request.Origin.JobID, r.Request.Origin.TriggerID)
			if _, ok := last[k]; !ok {
				last[k] = r
			}
		}
	}
	for _, j := range jl.Jobs {
		row := jobRow{CronJob: j, Model: "default"}
		var o runqueue.Options
		if json.Unmarshal(j.Options, &o) == nil && o.Model != "" {
			row.Model = o.Model
		}
		if r, ok := last[runqueue.OriginCron+":"+j.ID]; ok {
			row.LastRun = &r
		}
		d.Jobs = append(d.Jobs, row)
	}
	paused := map[string]bool{}
	for _, j := range jl.Jobs {
		paused[j.ID] = j.Paused
	}
	for _, t := range tl.Triggers {
		row := triggerRow{Trigger: t, Paused: t.JobID != "" && paused[t.JobID]}
		if r, ok := last[runqueue.OriginTrigger+":"+t.ID]; ok {
			row.LastRun = &r
		}
		d.Triggers = append(d.Triggers, row)
	}
	if len(d.Projects) > 0 {
		d.Form.Dir = d.Projects[0]
	}
	return d, nil
}

func (c *Console) schedulesPage(w http.ResponseWriter, r *http.Request, s *session) {
	d, err := c.schedulesData(r.Context(), s)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, 0, func(o *out) { renderSchedules(o, d) })
}

// PreviewFires is how many next fires a schedule preview shows.
const PreviewFires = 5

// NextFires returns the next n scheduled times of a cron expression in a
// time zone ("" = local) after now, as the scheduler computes them (its
// per-job jitter, up to a tenth of the period, comes on top).
func NextFires(expr, tz string, now time.Time, n int) ([]time.Time, error) {
	loc, err := cron.ParseLocation(tz)
	if err != nil {
		return nil, err
	}
	sch, err := cron.Parse(expr, loc)
	if err != nil {
		return nil, err
	}
	var out []time.Time
	t := now
	for range n {
		if t, err = sch.Next(t); err != nil {
			break
		}
		out = append(out, t)
	}
	return out, nil
}

// preview answers the add form's live schedule check (JSON).
func (c *Console) preview(w http.ResponseWriter, r *http.Request, _ *session) {
	q := r.URL.Query()
	fires, err := NextFires(q.Get("cron"), q.Get("timezone"), c.now(), PreviewFires)
	res := struct {
		Next  []string `json:"next"`
		Error string   `json:"error,omitempty"`
	}{Next: []string{}}
	if err != nil {
		res.Error = err.Error()
	}
	for _, t := range fires {
		res.Next = append(res.Next, when(t))
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(res)
}

func (c *Console) jobPost(w http.ResponseWriter, r *http.Request, s *session) {
	f := r.PostForm
	form := jobForm{Cron: strings.TrimSpace(f.Get("cron")), Timezone: strings.TrimSpace(f.Get("timezone")), Prompt: strings.TrimSpace(f.Get("prompt")),
		Dir: strings.TrimSpace(f.Get("dir")), Model: strings.TrimSpace(f.Get("model")), Mode: f.Get("mode"),
		Lifetime: strings.TrimSpace(f.Get("lifetime")), Once: f.Get("once") != ""}
	again := func(status int, msg string) {
		d, err := c.schedulesData(r.Context(), s)
		if err != nil {
			c.fail(w, r, s, err)
			return
		}
		d.Form, d.Error = form, msg
		d.Preview, err = NextFires(form.Cron, form.Timezone, c.now(), PreviewFires)
		if err != nil {
			d.PreviewError = err.Error()
		}
		c.render(w, status, func(o *out) { renderSchedules(o, d) })
	}
	if f.Get("action") == "preview" {
		again(0, "")
		return
	}
	recurring := !form.Once
	jr := serveapi.JobRequest{Cron: form.Cron, Timezone: form.Timezone, Prompt: form.Prompt, Dir: form.Dir, Recurring: &recurring,
		Options: runqueue.Options{Model: form.Model, Mode: tool.Mode(form.Mode)}, Lifetime: form.Lifetime}
	var j store.CronJob
	if err := c.call(r.Context(), http.MethodPost, "/v1/jobs", jr, &j); err != nil {
		if wantsJSON(r) {
			c.fail(w, r, s, err)
			return
		}
		again(http.StatusBadRequest, errText(err))
		return
	}
	done(w, r, "/schedules#job-"+j.ID)
}

func (c *Console) jobDelete(w http.ResponseWriter, r *http.Request, s *session) {
	if err := c.call(r.Context(), http.MethodDelete, "/v1/jobs/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		c.fail(w, r, s, err)
		return
	}
	done(w, r, "/schedules")
}

// pause pauses (or resumes) a job or a trigger's schedule (kind "jobs" or
// "triggers") through the API, then shows the job's row.
func (c *Console) pause(kind string, paused bool) func(http.ResponseWriter, *http.Request, *session) {
	verb := "resume"
	if paused {
		verb = "pause"
	}
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		var j store.CronJob
		if err := c.call(r.Context(), http.MethodPost, "/v1/"+kind+"/"+url.PathEscape(r.PathValue("id"))+"/"+verb, struct{}{}, &j); err != nil {
			c.fail(w, r, s, err)
			return
		}
		done(w, r, "/schedules#job-"+url.PathEscape(j.ID))
	}
}

func (c *Console) triggerRun(w http.ResponseWriter, r *http.Request, s *session) {
	var run runqueue.Run
	if err := c.call(r.Context(), http.MethodPost, "/v1/triggers/"+url.PathEscape(r.PathValue("id"))+"/run", nil, &run); err != nil {
		c.fail(w, r, s, err)
		return
	}
	done(w, r, "/runs/"+url.PathEscape(run.ID))
}

func (c *Console) triggerDelete(w http.ResponseWriter, r *http.Request, s *session) {
	if err := c.call(r.Context(), http.MethodDelete, "/v1/triggers/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		c.fail(w, r, s, err)
		return
	}
	done(w, r, "/schedules")
}

// --- formatting ---

// age says how long ago t was, briefly ("12s", "5m", "3h", "2d").
func age(now, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(0, int(d.Seconds())))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// when writes a time for people, in its own zone.
func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Format("Mon 2006-01-02 15:04 MST")
}

// short cuts s to n runes.
func short(n int, s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// settingsScope is the scope an "allow always" answer names (the API
// checks it against the ask's).
func settingsScope(s string) settings.Scope { return settings.Scope(s) }
