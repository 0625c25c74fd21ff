package console_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/internal/console"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "0123456789abcdef0123456789abcdef-test"

// script runs the prompt's words: "ask" asks to run a command, "block"
// waits for the run's end, any other word is an assistant line.
var script = runqueue.RunnerFunc(func(ctx context.Context, req runqueue.Request, x runqueue.Exec) (*runqueue.Result, error) {
	x.Started("sess-" + x.RunID)
	x.Emit(map[string]any{"type": "system", "subtype": "init", "model": "scripted"})
	for _, w := range strings.Fields(req.Prompt) {
		switch w {
		case "ask":
			a, err := interaction.AskPermission(ctx, x.Channel, &interaction.PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":"make"}`)})
			if err != nil {
				return nil, err
			}
			x.Emit(map[string]any{"type": "assistant", "message": map[string]any{"content": []map[string]any{{"type": "text", "text": string(a.Choice) + " " + a.Message}}}})
		case "block":
			<-ctx.Done()
			return nil, ctx.Err()
		default:
			x.Emit(map[string]any{"type": "assistant", "message": map[string]any{"content": []map[string]any{{"type": "text", "text": w}}}})
		}
	}
	x.Emit(map[string]any{"type": "result", "subtype": "success", "result": "ok", "num_turns": 1})
	return &runqueue.Result{Subtype: "success", Text: "ok"}, nil
})

// syncBuf is a log sink safe for concurrent writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type fixture struct {
	url string // http://127.0.0.1:PORT
	dir string
	log *syncBuf
	st  *store.SQLite
}

// start runs a serve process with the console on a loopback port.
func start(t testing.TB, o serve.Options) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "g.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	buf := &syncBuf{}
	o.Store, o.Listener, o.Token, o.Tick = st, ln, token, time.Hour
	o.Logger = slog.New(slog.NewTextHandler(buf, nil))
	if o.Runner == nil {
		o.Runner = script
	}
	srv, err := serve.New(o)
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(rctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	f := &fixture{url: "http://" + ln.Addr().String(), dir: t.TempDir(), log: buf, st: st}
	hc := http.DefaultClient
	if o.TLS != nil {
		f.url = "https://" + ln.Addr().String()
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
		hc = &http.Client{Transport: tr}
		defer tr.CloseIdleConnections()
	}
	for i := 0; ; i++ {
		resp, err := hc.Get(f.url + "/v1/health")
		if err == nil {
			resp.Body.Close()
			break
		}
		if i > 200 {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return f
}

// browser is an HTTP client that behaves like a same-origin page: a
// cookie jar, no redirects followed, and an Origin header on POSTs.
type browser struct {
	t      testing.TB
	c      *http.Client
	base   string
	origin string
}

func newBrowser(t testing.TB, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, origin: base, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(method, path string, form url.Values, hdr map[string]string) (*http.Response, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if method == http.MethodPost && b.origin != "" {
		req.Header.Set("Origin", b.origin)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

var csrfRE = regexp.MustCompile(`<meta name="csrf-token" content="([0-9a-f]+)">`)

// login logs in and returns the session's CSRF token.
func (b *browser) login() string {
	b.t.Helper()
	resp, _ := b.do(http.MethodPost, "/login", url.Values{"token": {token}, "next": {"/"}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		b.t.Fatalf("login: %s", resp.Status)
	}
	_, page := b.do(http.MethodGet, "/", nil, nil)
	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		b.t.Fatalf("no CSRF token in the runs page:\n%s", page)
	}
	return m[1]
}

func TestLoginCookie(t *testing.T) {
	f := start(t, serve.Options{})
	b := newBrowser(t, f.url)

	// Without a session: to the login page, and no cookie.
	resp, _ := b.do(http.MethodGet, "/runs/x?y=1", nil, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=%2Fruns%2Fx%3Fy%3D1" {
		t.Fatalf("no session: %s %s", resp.Status, resp.Header.Get("Location"))
	}
	if len(resp.Cookies()) != 0 {
		t.Fatal("a cookie without the token")
	}
	resp, page := b.do(http.MethodPost, "/login", url.Values{"token": {"wrong-token"}}, nil)
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 || strings.Contains(page, "wrong-token") {
		t.Fatalf("wrong token: %s cookies %v", resp.Status, resp.Cookies())
	}

	resp, _ = b.do(http.MethodPost, "/login", url.Values{"token": {token}, "next": {"//evil.example/x"}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("login: %s to %q (an open redirect?)", resp.Status, resp.Header.Get("Location"))
	}
	cs := resp.Cookies()
	if len(cs) != 1 {
		t.Fatalf("cookies %v", cs)
	}
	c := cs[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure || c.Path != "/" || c.Value == token || strings.Contains(c.Value, token) {
		t.Fatalf("cookie %+v", c)
	}
	resp, page = b.do(http.MethodGet, "/", nil, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "<h1>Runs</h1>") {
		t.Fatalf("runs page after login: %s", resp.Status)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'") {
		t.Fatalf("CSP %q", csp)
	}
	if strings.Contains(page, token) {
		t.Fatal("the token is in the page")
	}
	// The cookie is no bearer token: the API still wants the token.
	resp, _ = b.do(http.MethodGet, "/v1/runs", nil, nil)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("API with the console's cookie: %s", resp.Status)
	}
	// Log out ends the session.
	csrf := b.login()
	resp, _ = b.do(http.MethodPost, "/logout", url.Values{"csrf": {csrf}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %s", resp.Status)
	}
	if resp, _ = b.do(http.MethodGet, "/", nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("after logout: %s", resp.Status)
	}
	if strings.Contains(f.log.String(), token) || strings.Contains(f.log.String(), c.Value) {
		t.Fatal("the token or the session cookie is in the log")
	}
}

func TestCSRFAndOrigin(t *testing.T) {
	f := start(t, serve.Options{})
	b := newBrowser(t, f.url)
	csrf := b.login()
	form := func(tok string) url.Values {
		return url.Values{"csrf": {tok}, "prompt": {"hello"}, "dir": {f.dir}}
	}
	cases := []struct {
		name   string
		csrf   string
		hdr    map[string]string
		origin string
		want   int
	}{
		{"no CSRF token", "", nil, f.url, http.StatusForbidden},
		{"wrong CSRF token", strings.Repeat("0", 64), nil, f.url, http.StatusForbidden},
		{"cross-origin form", csrf, nil, "http://evil.example", http.StatusForbidden},
		{"another port", csrf, nil, "http://127.0.0.1:1", http.StatusForbidden},
		{"https origin for an http page", csrf, nil, strings.Replace(f.url, "http:", "https:", 1), http.StatusForbidden},
		{"no Origin, no Sec-Fetch-Site", csrf, nil, "", http.StatusForbidden},
		{"no Origin, cross-site fetch", csrf, map[string]string{"Sec-Fetch-Site": "cross-site"}, "", http.StatusForbidden},
		{"no Origin, same-origin fetch", csrf, map[string]string{"Sec-Fetch-Site": "same-origin"}, "", http.StatusSeeOther},
		{"same origin", csrf, nil, f.url, http.StatusSeeOther},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b.origin = tc.origin
			resp, page := b.do(http.MethodPost, "/new", form(tc.csrf), tc.hdr)
			if resp.StatusCode != tc.want {
				t.Fatalf("%s: %s\n%s", tc.name, resp.Status, page)
			}
		})
	}
	// Only the two accepted requests started runs.
	runs, err := serve.Stored(f.st).List(context.Background(), runqueue.Filter{})
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %d %v", len(runs), err)
	}
	// A cross-origin login is refused too (login CSRF).
	b2 := newBrowser(t, f.url)
	b2.origin = "http://evil.example"
	if resp, _ := b2.do(http.MethodPost, "/login", url.Values{"token": {token}}, nil); resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Fatalf("cross-origin login: %s", resp.Status)
	}
}

func TestHostAllowList(t *testing.T) {
	f := start(t, serve.Options{ConsoleHosts: []string{"gantry.internal"}})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(f.url, "http://"))
	b := newBrowser(t, f.url)
	for host, want := range map[string]int{
		"127.0.0.1:" + port:        http.StatusOK,
		"localhost:" + port:        http.StatusOK,
		"LOCALHOST:" + port:        http.StatusOK,
		"gantry.internal:" + port:  http.StatusOK,
		"gantry.internal":          http.StatusOK,
		"evil.example:" + port:     http.StatusMisdirectedRequest,
		"127.0.0.1.nip.io:" + port: http.StatusMisdirectedRequest,
	} {
		resp, _ := b.do(http.MethodGet, "/login", nil, map[string]string{"Host": host})
		if resp.StatusCode != want {
			t.Errorf("Host %q: %s, want %d", host, resp.Status, want)
		}
	}
	// The API is not the console's: a bearer client may use any name.
	req, _ := http.NewRequest(http.MethodGet, f.url+"/v1/runs", nil)
	req.Host = "api.example"
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("API by another name: %s", resp.Status)
	}
}

// addrListener is a listener that only claims an address.
type addrListener struct {
	net.Listener
	addr net.Addr
}

func (l addrListener) Addr() net.Addr { return l.addr }

func TestRefusedOffLoopbackWithoutTLS(t *testing.T) {
	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "g.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tcp, _ := net.ResolveTCPAddr("tcp", "192.0.2.10:7777")
	fake := addrListener{ln, tcp}
	for _, tc := range []struct {
		name string
		o    serve.Options
		ok   bool
	}{
		{"plain HTTP", serve.Options{}, false},
		{"--insecure-console", serve.Options{InsecureConsole: true}, true},
		{"--no-console", serve.Options{NoConsole: true}, true},
		{"TLS", serve.Options{TLS: &tls.Config{}}, true},
	} {
		o := tc.o
		o.Store, o.Runner, o.Listener, o.Token = st, script, fake, token
		_, err := serve.New(o)
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "--insecure-console")) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestSecureCookieUnderTLS(t *testing.T) {
	api := http.NewServeMux()
	api.HandleFunc("GET /v1/runs", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"runs":[]}`) })
	con, err := console.New(console.Options{API: api, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(con)
	defer srv.Close()
	b := newBrowser(t, srv.URL)
	b.c.Transport = srv.Client().Transport
	resp, _ := b.do(http.MethodPost, "/login", url.Values{"token": {token}}, nil)
	cs := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cs) != 1 {
		t.Fatalf("login: %s %v", resp.Status, cs)
	}
	if c := cs[0]; !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Name != "__Host-gantry_console" {
		t.Fatalf("cookie under TLS %+v", c)
	}
	srv.Client().CloseIdleConnections()
}

func TestAnswerAndCancelFromForms(t *testing.T) {
	f := start(t, serve.Options{})
	b := newBrowser(t, f.url)
	csrf := b.login()
	resp, _ := b.do(http.MethodPost, "/new", url.Values{"csrf": {csrf}, "prompt": {"ask"}, "dir": {f.dir}}, nil)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/runs/") {
		t.Fatalf("start: %s %s", resp.Status, loc)
	}
	id := strings.TrimPrefix(loc, "/runs/")
	eng := serve.Stored(f.st)
	var ask string
	for range 400 {
		r, _ := eng.Get(context.Background(), id)
		if len(r.Asks) > 0 {
			ask = r.Asks[0].ID
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The live page shows the ask with the terminal's choices. (The
	// stored engine has no pending asks of its own: the page reads the
	// serving process's.)
	_, page := b.do(http.MethodGet, "/runs/"+id, nil, nil)
	for _, want := range []string{`value="allow_once"`, `value="deny"`, `name="message"`, "$ </span>make"} {
		if !strings.Contains(page, want) {
			t.Fatalf("run page lacks %s:\n%s", want, page)
		}
	}
	if ask == "" {
		m := regexp.MustCompile(`data-ask="([^"]+)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatal("no ask")
		}
		ask = m[1]
	}
	resp, body := b.do(http.MethodPost, "/runs/"+id+"/asks/"+ask, url.Values{"csrf": {csrf}, "choice": {"deny"}, "message": {"not now"}},
		map[string]string{"Accept": "application/json"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("answer: %s %s", resp.Status, body)
	}
	// Answering again: the ask is gone.
	resp, body = b.do(http.MethodPost, "/runs/"+id+"/asks/"+ask, url.Values{"csrf": {csrf}, "choice": {"deny"}},
		map[string]string{"Accept": "application/json"})
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "answered already") {
		t.Fatalf("second answer: %s %s", resp.Status, body)
	}
	var evs []string
	for range 400 {
		evs = evs[:0]
		for ev, err := range eng.Events(context.Background(), id, 0) {
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, string(ev.Data))
		}
		if strings.Contains(strings.Join(evs, "\n"), "deny not now") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(strings.Join(evs, "\n"), "deny not now") {
		t.Fatalf("the denial's message did not reach the run: %v", evs)
	}

	// Cancel a blocked run.
	resp, _ = b.do(http.MethodPost, "/new", url.Values{"csrf": {csrf}, "prompt": {"block"}, "dir": {f.dir}}, nil)
	id = strings.TrimPrefix(resp.Header.Get("Location"), "/runs/")
	resp, _ = b.do(http.MethodPost, "/runs/"+id+"/cancel", url.Values{"csrf": {csrf}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %s", resp.Status)
	}
	for range 400 {
		if r, _ := eng.Get(context.Background(), id); r.Status == runqueue.StatusCancelled {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the run was not cancelled")
}

func TestNextFires(t *testing.T) {
	now := time.Date(2026, 3, 6, 10, 0, 0, 0, time.UTC)
	got, err := console.NextFires("30 9 * * 1-5", "UTC", now, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2026-03-09 09:30", "2026-03-10 09:30", "2026-03-11 09:30"}
	for i, w := range want {
		if got[i].Format("2006-01-02 15:04") != w {
			t.Fatalf("fires %v", got)
		}
	}
	for _, bad := range []struct{ cron, tz string }{{"0 9 * *", ""}, {"0 0 31 2 *", ""}, {"* * * * *", "Mars/Olympus"}} {
		if _, err := console.NextFires(bad.cron, bad.tz, now, 3); err == nil {
			t.Errorf("%q %q accepted", bad.cron, bad.tz)
		}
	}
}

// formRunner asks a multi-select question and then a plan, and emits
// the answers it got.
var formRunner = runqueue.RunnerFunc(func(ctx context.Context, _ runqueue.Request, x runqueue.Exec) (*runqueue.Result, error) {
	x.Started("s")
	qa, err := interaction.AskQuestions(ctx, x.Channel, &interaction.QuestionRequest{Questions: []interaction.Question{
		{Question: "Which checks?", Header: "Checks", MultiSelect: true, Options: []interaction.Option{{Label: "vet"}, {Label: "lint"}, {Label: "race"}}},
		{Question: "Which branch?", Header: "Branch", Options: []interaction.Option{{Label: "main"}, {Label: "dev"}}},
		{Question: "Skipped?", Header: "Skip", Options: []interaction.Option{{Label: "a"}, {Label: "b"}}},
	}})
	if err != nil {
		return nil, err
	}
	x.Emit(map[string]any{"type": "assistant", "answers": qa.Answers})
	pa, err := interaction.ApprovePlan(ctx, x.Channel, &interaction.PlanRequest{Plan: "# Plan\n\n1. do it", ReturnMode: "default"})
	if err != nil {
		return nil, err
	}
	x.Emit(map[string]any{"type": "assistant", "plan": pa})
	return &runqueue.Result{Subtype: "success"}, nil
})

// TestQuestionAndPlanForms answers a question and a plan with plain form
// posts (no script): the console turns the forms into the API's answers.
func TestQuestionAndPlanForms(t *testing.T) {
	f := start(t, serve.Options{Runner: formRunner})
	b := newBrowser(t, f.url)
	csrf := b.login()
	resp, _ := b.do(http.MethodPost, "/new", url.Values{"csrf": {csrf}, "prompt": {"p"}, "dir": {f.dir}}, nil)
	id := strings.TrimPrefix(resp.Header.Get("Location"), "/runs/")
	askRE := regexp.MustCompile(`data-ask="([^"]+)" data-kind="([a-z]+)"`)
	waitAsk := func(kind string) string {
		t.Helper()
		for range 400 {
			_, page := b.do(http.MethodGet, "/asks", nil, nil)
			if m := askRE.FindStringSubmatch(page); m != nil && m[2] == kind {
				return m[1]
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("no %s ask", kind)
		return ""
	}
	ask := waitAsk("question")
	form := url.Values{"csrf": {csrf}, "back": {"/asks"},
		"q0": {"vet", "race", "not-an-option"}, "q0_other": {"fuzz"}, // multi-select: options and a free answer
		"q1": {"main"}, "q1_other": {"release"}} // single: the free answer wins
	resp, page := b.do(http.MethodPost, "/runs/"+id+"/asks/"+ask, form, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/asks" {
		t.Fatalf("question: %s %s\n%s", resp.Status, resp.Header.Get("Location"), page)
	}
	ask = waitAsk("plan")
	resp, _ = b.do(http.MethodPost, "/runs/"+id+"/asks/"+ask, url.Values{"csrf": {csrf}, "approve": {"yes"}, "mode": {"acceptEdits"}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/runs/"+id {
		t.Fatalf("plan: %s", resp.Status)
	}
	var got []string
	for ev, err := range serve.Stored(f.st).Events(context.Background(), id, 0) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(ev.Data))
	}
	all := strings.Join(got, "\n")
	var answers string
	for _, l := range got {
		if strings.Contains(l, `"answers"`) {
			answers = l
		}
	}
	for _, want := range []string{`"Which checks?":"vet, race, fuzz"`, `"Which branch?":"release"`, `"approved":true`, `"mode":"acceptEdits"`} {
		if !strings.Contains(all, want) {
			t.Errorf("the run got no %s:\n%s", want, all)
		}
	}
	if strings.Contains(answers, "Skipped?") || strings.Contains(answers, "not-an-option") {
		t.Errorf("an unanswered question or a made-up option reached the run:\n%s", all)
	}
}

// TestServeOverTLS: Options.TLS serves the API and the console over TLS,
// and the console's cookie is Secure.
func TestServeOverTLS(t *testing.T) {
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	cfg := &tls.Config{Certificates: ts.TLS.Certificates}
	client := ts.Client()
	ts.Close()
	f := start(t, serve.Options{TLS: cfg})
	b := newBrowser(t, f.url)
	b.c.Transport = client.Transport
	resp, _ := b.do(http.MethodPost, "/login", url.Values{"token": {token}}, nil)
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 || !resp.Cookies()[0].Secure || resp.Cookies()[0].Name != "__Host-gantry_console" {
		t.Fatalf("login over TLS: %s %v", resp.Status, resp.Cookies())
	}
	b.origin = strings.Replace(f.url, "https:", "http:", 1) // an http origin for an https page
	if resp, _ := b.do(http.MethodPost, "/login", url.Values{"token": {token}}, nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("http origin over TLS: %s", resp.Status)
	}
	client.CloseIdleConnections()
}

// TestPagesEscape: what a run's request holds (the prompt, the directory)
// is text on every page, never markup.
func TestPagesEscape(t *testing.T) {
	f := start(t, serve.Options{})
	b := newBrowser(t, f.url)
	csrf := b.login()
	evil := `"><script>alert(1)</script><img src=x onerror=alert(2)>`
	resp, _ := b.do(http.MethodPost, "/new", url.Values{"csrf": {csrf}, "prompt": {evil}, "dir": {f.dir}}, nil)
	id := strings.TrimPrefix(resp.Header.Get("Location"), "/runs/")
	for _, path := range []string{"/", "/runs/" + id, "/runs/" + id + "/live", "/asks", "/new", "/schedules"} {
		_, page := b.do(http.MethodGet, path, nil, nil)
		if strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") {
			t.Errorf("%s renders the prompt as markup", path)
		}
	}
	_, page := b.do(http.MethodGet, "/", nil, nil)
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the runs list lacks the escaped prompt:\n%s", page)
	}
	// A bad directory comes back in the form, escaped.
	resp, page = b.do(http.MethodPost, "/new", url.Values{"csrf": {csrf}, "prompt": {"x"}, "dir": {evil}}, nil)
	if resp.StatusCode != http.StatusBadRequest || strings.Contains(page, "<script>alert") || !strings.Contains(page, `value="&#34;&gt;&lt;script&gt;`) {
		t.Errorf("the new-run form with a bad directory: %s\n%s", resp.Status, page)
	}
}

// TestSchedulesPage: jobs and triggers are listed with their next fire
// and last run; a trigger runs now and is removed, a job is added (a bad
// schedule is refused with the scheduler's reason) and removed.
func TestSchedulesPage(t *testing.T) {
	f := start(t, serve.Options{})
	ctx := context.Background()
	c := &serveapi.Client{URL: f.url, Token: token}
	var tr struct{ ID string }
	if err := c.Do(ctx, http.MethodPost, "/v1/triggers", map[string]any{"name": "nightly", "prompt": "summarise", "dir": f.dir, "cron": "0 3 * * *"}, &tr); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, f.url)
	csrf := b.login()
	_, page := b.do(http.MethodGet, "/schedules", nil, nil)
	for _, want := range []string{`id="trigger-` + tr.ID + `"`, "<strong>nightly</strong>", "<code>0 3 * * *</code>", "trigger " + tr.ID} {
		if !strings.Contains(page, want) {
			t.Fatalf("schedules page lacks %s:\n%s", want, page)
		}
	}
	resp, _ := b.do(http.MethodPost, "/triggers/"+tr.ID+"/run", url.Values{"csrf": {csrf}}, nil)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/runs/") {
		t.Fatalf("run now: %s", resp.Status)
	}
	for range c.Events(ctx, strings.TrimPrefix(resp.Header.Get("Location"), "/runs/"), 0) {
	}
	if _, page = b.do(http.MethodGet, "/schedules", nil, nil); !strings.Contains(page, `st-succeeded`) {
		t.Fatalf("the trigger's last run is not shown:\n%s", page)
	}
	resp, page = b.do(http.MethodPost, "/jobs", url.Values{"csrf": {csrf}, "cron": {"0 0 31 2 *"}, "prompt": {"never"}, "dir": {f.dir}}, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, `role="alert"`) || !strings.Contains(page, `value="0 0 31 2 *"`) {
		t.Fatalf("an impossible schedule: %s\n%s", resp.Status, page)
	}
	resp, page = b.do(http.MethodPost, "/jobs", url.Values{"csrf": {csrf}, "cron": {"15 10 * * *"}, "timezone": {"Europe/Paris"}, "action": {"preview"}}, nil)
	if resp.StatusCode != http.StatusOK || strings.Count(page, "<li>") != console.PreviewFires || !strings.Contains(page, "10:15 CET") && !strings.Contains(page, "10:15 CEST") {
		t.Fatalf("preview without script: %s\n%s", resp.Status, page)
	}
	resp, _ = b.do(http.MethodPost, "/jobs", url.Values{"csrf": {csrf}, "cron": {"15 10 * * *"}, "prompt": {"daily"}, "dir": {f.dir}}, nil)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/schedules#job-") {
		t.Fatalf("add: %s %s", resp.Status, loc)
	}
	job := strings.TrimPrefix(loc, "/schedules#job-")
	// Pause: the job shows paused, with no next fire and a Resume button;
	// a trigger's Pause pauses its schedule's job.
	resp, _ = b.do(http.MethodPost, "/jobs/"+job+"/pause", url.Values{"csrf": {csrf}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/schedules#job-"+job {
		t.Fatalf("pause: %s %s", resp.Status, resp.Header.Get("Location"))
	}
	resp, _ = b.do(http.MethodPost, "/triggers/"+tr.ID+"/pause", url.Values{"csrf": {csrf}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("pause the trigger: %s", resp.Status)
	}
	if resp, _ = b.do(http.MethodPost, "/jobs/"+job+"/pause", url.Values{}, nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("pause without the CSRF token: %s", resp.Status)
	}
	_, page = b.do(http.MethodGet, "/schedules", nil, nil)
	row := func(id string) string {
		i := strings.Index(page, `id="`+id+`"`)
		if i < 0 {
			t.Fatalf("no row %s:\n%s", id, page)
		}
		return page[i : i+strings.Index(page[i:], "</tr>")]
	}
	for _, id := range []string{"job-" + job, "trigger-" + tr.ID} {
		if r := row(id); !strings.Contains(r, `st-paused">paused<`) || !strings.Contains(r, `/resume"`) || strings.Contains(r, `/pause"`) {
			t.Fatalf("paused row %s:\n%s", id, r)
		}
	}
	if r := row("job-" + job); !strings.Contains(r, `class="job paused"`) || strings.Contains(r, "10:15") {
		t.Fatalf("a paused job shows a next fire:\n%s", r)
	}
	resp, _ = b.do(http.MethodPost, "/jobs/"+job+"/resume", url.Values{"csrf": {csrf}}, nil)
	resp2, _ := b.do(http.MethodPost, "/triggers/"+tr.ID+"/resume", url.Values{"csrf": {csrf}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp2.StatusCode != http.StatusSeeOther {
		t.Fatalf("resume: %s %s", resp.Status, resp2.Status)
	}
	_, page = b.do(http.MethodGet, "/schedules", nil, nil)
	if r := row("job-" + job); strings.Contains(r, "st-paused") || !strings.Contains(r, "10:15") || !strings.Contains(r, `/pause"`) {
		t.Fatalf("resumed row:\n%s", r)
	}
	resp, _ = b.do(http.MethodPost, "/jobs/"+job+"/delete", url.Values{"csrf": {csrf}}, nil)
	resp2, _ = b.do(http.MethodPost, "/triggers/"+tr.ID+"/delete", url.Values{"csrf": {csrf}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp2.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove: %s %s", resp.Status, resp2.Status)
	}
	var jl serveapi.JobList
	if err := c.Do(ctx, http.MethodGet, "/v1/jobs", nil, &jl); err != nil || len(jl.Jobs) != 0 {
		t.Fatalf("jobs left: %v %v", jl.Jobs, err)
	}
}
