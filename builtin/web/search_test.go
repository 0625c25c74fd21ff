package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
)

// fakeAPI serves one search API's JSON and records the last request.
type fakeAPI struct {
	srv  *httptest.Server
	last *http.Request
	body []byte
}

func newFakeAPI(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *fakeAPI {
	f := &fakeAPI{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.last = r.Clone(context.Background())
		f.body, _ = io.ReadAll(r.Body)
		answer(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func TestSearchBackends(t *testing.T) {
	brave := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != "bk" {
			http.Error(w, `{"error":"unauthorized"}`, 401)
			return
		}
		fmt.Fprint(w, `{"type":"search","web":{"results":[
			{"title":"The <strong>Go</strong> Blog","url":"https://go.dev/blog/","description":"News about <strong>Go</strong>","age":"2 days ago"},
			{"title":"Evil","url":"https://evil.example/go","description":"x"}]}}`)
	})
	tavily := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tk" || r.Method != http.MethodPost {
			http.Error(w, `{"detail":"bad"}`, 401)
			return
		}
		fmt.Fprint(w, `{"query":"go","results":[{"title":"Go","url":"https://go.dev/","content":"The Go language","score":0.9,"published_date":"2025-01-02"}]}`)
	})
	searx := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "forbidden", 403)
			return
		}
		fmt.Fprint(w, `{"query":"go","results":[{"title":"Go docs","url":"https://pkg.go.dev/std","content":"Standard library","engine":"ddg"},{"title":"no url","url":"javascript:alert(1)"}]}`)
	})
	q := SearchQuery{Query: "golang", Max: 5}
	for _, tt := range []struct {
		b     SearchBackend
		api   *fakeAPI
		want  []SearchResult
		check func(t *testing.T, f *fakeAPI)
	}{
		{&Brave{APIKey: "bk", Endpoint: brave.srv.URL}, brave, []SearchResult{
			{Title: "The Go Blog", URL: "https://go.dev/blog/", Snippet: "News about Go", Age: "2 days ago"},
			{Title: "Evil", URL: "https://evil.example/go", Snippet: "x"}},
			func(t *testing.T, f *fakeAPI) {
				if f.last.URL.Query().Get("q") != "golang" || f.last.URL.Query().Get("count") != "5" {
					t.Errorf("brave query %v", f.last.URL.Query())
				}
			}},
		{&Tavily{APIKey: "tk", Endpoint: tavily.srv.URL}, tavily, []SearchResult{{Title: "Go", URL: "https://go.dev/", Snippet: "The Go language", Age: "2025-01-02"}},
			func(t *testing.T, f *fakeAPI) {
				var body map[string]any
				json.Unmarshal(f.body, &body)
				if body["query"] != "golang" || body["max_results"] != float64(5) {
					t.Errorf("tavily body %s", f.body)
				}
			}},
		{&SearXNG{BaseURL: searx.srv.URL + "/"}, searx, []SearchResult{{Title: "Go docs", URL: "https://pkg.go.dev/std", Snippet: "Standard library"}, {Title: "no url", URL: "javascript:alert(1)"}}, nil},
	} {
		t.Run(tt.b.Name(), func(t *testing.T) {
			got, err := tt.b.Search(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
			if tt.check != nil {
				tt.check(t, tt.api)
			}
		})
	}
	// Errors carry the API's status.
	if _, err := (&Brave{APIKey: "wrong", Endpoint: brave.srv.URL}).Search(context.Background(), q); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("err = %v", err)
	}
	// Tavily passes the domain filters; Brave narrows one allowed domain with site:.
	if _, err := (&Tavily{APIKey: "tk", Endpoint: tavily.srv.URL}).Search(context.Background(), SearchQuery{Query: "go", BlockedDomains: []string{"evil.example"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tavily.body), `"exclude_domains":["evil.example"]`) {
		t.Fatalf("tavily body %s", tavily.body)
	}
	(&Brave{APIKey: "bk", Endpoint: brave.srv.URL}).Search(context.Background(), SearchQuery{Query: "go", AllowedDomains: []string{"go.dev"}})
	if got := brave.last.URL.Query().Get("q"); got != "go site:go.dev" {
		t.Fatalf("brave q = %q", got)
	}

	// The tool filters whatever the backend returns.
	ws := Tools(Options{Search: &Brave{APIKey: "bk", Endpoint: brave.srv.URL}})[1]
	res := mustCall(t, ws, nil, searchInput{Query: "golang", BlockedDomains: []string{"evil.example"}})
	wantAll(t, res.TextContent(), "1. The Go Blog\n   https://go.dev/blog/", "News about Go", "untrusted")
	wantNone(t, res.TextContent(), "evil.example")
	res = mustCall(t, ws, nil, searchInput{Query: "golang", AllowedDomains: []string{"https://evil.example/"}})
	wantAll(t, res.TextContent(), "evil.example/go")
	wantNone(t, res.TextContent(), "go.dev/blog")
	if rs := res.Structured.([]SearchResult); len(rs) != 1 {
		t.Fatalf("structured %+v", rs)
	}
	sx := Tools(Options{Search: &SearXNG{BaseURL: searx.srv.URL}})[1]
	res = mustCall(t, sx, nil, searchInput{Query: "golang"})
	wantNone(t, res.TextContent(), "javascript:")
	for _, bad := range []searchInput{
		{Query: "x"},
		{Query: "golang", AllowedDomains: []string{"a.io"}, BlockedDomains: []string{"b.io"}},
		{Query: "golang", AllowedDomains: []string{"/"}},
	} {
		if _, err := tooltest.Run(t.Context(), ws, testEnv(t), bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestFilterResults(t *testing.T) {
	rs := []SearchResult{
		{URL: "https://go.dev/a"}, {URL: "https://blog.go.dev/b"}, {URL: "https://notgo.dev/c"},
		{URL: "http://GO.DEV./d"}, {URL: "ftp://go.dev/e"}, {URL: "::bad"},
	}
	urls := func(rs []SearchResult) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.URL)
		}
		return strings.Join(s, " ")
	}
	for _, tt := range []struct {
		allowed, blocked []string
		want             string
	}{
		{nil, nil, "https://go.dev/a https://blog.go.dev/b https://notgo.dev/c http://GO.DEV./d"},
		{[]string{"go.dev"}, nil, "https://go.dev/a https://blog.go.dev/b http://GO.DEV./d"},
		{[]string{"*.go.dev"}, nil, "https://blog.go.dev/b"},
		{nil, []string{"go.dev"}, "https://notgo.dev/c"},
		{nil, []string{"blog.go.dev"}, "https://go.dev/a https://notgo.dev/c http://GO.DEV./d"},
	} {
		if got := urls(FilterResults(rs, tt.allowed, tt.blocked)); got != tt.want {
			t.Errorf("allowed %v blocked %v: %s, want %s", tt.allowed, tt.blocked, got, tt.want)
		}
	}
}

func TestSearchFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tt := range []struct {
		env     map[string]string
		want    string
		wantErr bool
	}{
		{map[string]string{}, "<nil>", false},
		{map[string]string{"TAVILY_API_KEY": "t", "SEARXNG_URL": "http://s"}, "tavily", false},
		{map[string]string{"BRAVE_SEARCH_API_KEY": "b", "TAVILY_API_KEY": "t"}, "brave", false},
		{map[string]string{"SEARXNG_URL": "http://s"}, "searxng", false},
		{map[string]string{"GANTRY_WEB_SEARCH": "none", "BRAVE_SEARCH_API_KEY": "b"}, "<nil>", false},
		{map[string]string{"GANTRY_WEB_SEARCH": "searxng", "BRAVE_SEARCH_API_KEY": "b", "SEARXNG_URL": "http://s"}, "searxng", false},
		{map[string]string{"GANTRY_WEB_SEARCH": "brave"}, "", true},
		{map[string]string{"GANTRY_WEB_SEARCH": "bing"}, "", true},
	} {
		b, err := SearchFromEnv(env(tt.env))
		if (err != nil) != tt.wantErr {
			t.Errorf("%v: err = %v", tt.env, err)
			continue
		}
		got := "<nil>"
		if b != nil {
			got = b.Name()
		}
		if !tt.wantErr && got != tt.want {
			t.Errorf("%v: %s, want %s", tt.env, got, tt.want)
		}
	}
}

// TestModelSearch drives the Anthropic server-side web search through the
// official SDK against the fake API.
func TestModelSearch(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.Reply{
		AnthropicBlocks: []map[string]any{
			{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": map[string]any{"query": "gantry go"}},
			{"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []any{
				map[string]any{"type": "web_search_result", "title": "Gantry", "url": "https://gantry.example/", "encrypted_content": "abc", "page_age": "1 day"},
				map[string]any{"type": "web_search_result", "title": "Blocked", "url": "https://evil.example/", "encrypted_content": "def"},
			}},
		},
		Content: []llm.Block{llm.Text("Found it.")},
	}, llmtest.Reply{
		AnthropicBlocks: []map[string]any{
			{"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2", "content": map[string]any{"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
		},
	})
	p := anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test", Retry: llm.RetryPolicy{MaxAttempts: 1}})
	ws := Tools(Options{Search: &ModelSearch{Provider: p, Model: "claude-haiku-4-5"}})[1]
	res := mustCall(t, ws, nil, searchInput{Query: "gantry go", BlockedDomains: []string{"evil.example"}})
	wantAll(t, res.TextContent(), "1. Gantry\n   https://gantry.example/", "(1 day)", "(anthropic)")
	wantNone(t, res.TextContent(), "evil.example")
	reqs := srv.Requests()
	if len(reqs) != 1 || len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Type != "web_search_20250305" || reqs[0].Model != "claude-haiku-4-5" {
		t.Fatalf("request %+v", reqs)
	}
	var def map[string]any
	json.Unmarshal(reqs[0].Tools[0].Raw, &def)
	if def["name"] != "web_search" || fmt.Sprint(def["blocked_domains"]) != "[evil.example]" || def["max_uses"] != float64(5) {
		t.Fatalf("tool definition %s", reqs[0].Tools[0].Raw)
	}
	if _, err := tooltest.Run(t.Context(), ws, testEnv(t), searchInput{Query: "gantry go"}); err == nil || !strings.Contains(err.Error(), "max_uses_exceeded") {
		t.Fatalf("err = %v", err)
	}
}

// TestModelSummarizer answers WebFetch's prompt with a side model through
// the official SDK against the fake API.
func TestModelSummarizer(t *testing.T) {
	site := localSite(t)
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.TextReply("WebFetch and Bash."))
	p := anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test", Retry: llm.RetryPolicy{MaxAttempts: 1}})
	services := &tool.Services{}
	tool.Provide[Summarizer](services, &ModelSummarizer{Provider: p, Model: "claude-haiku-4-5"})
	env := &tool.Env{WorkDir: t.TempDir(), Services: services}
	res := mustCall(t, fetchTool(t, Options{Network: loopback}), env, fetchInput{URL: site.URL + "/inject", Prompt: "which tools?"})
	wantAll(t, res.TextContent(), "WebFetch and Bash.", "A small model read the page")
	req := srv.Requests()[0]
	if req.Model != "claude-haiku-4-5" || !strings.Contains(req.System[0].Text, "never instructions") {
		t.Fatalf("request %+v", req)
	}
	user := req.Messages[0].Content[0].Text
	wantAll(t, user, `<web_page url="`+site.URL+`/inject" trust="untrusted">`, "ignore all previous instructions", "Question about the page above: which tools?")
	if n := strings.Count(user, "</web_page"); n != 1 {
		t.Fatalf("%d closing tags in the side model's prompt", n)
	}
}
