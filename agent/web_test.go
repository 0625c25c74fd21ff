package agent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/builtin/web"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/netguard"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/workspace"
)

// TestSmallModelAnswersWebFetch: with the workspace's Summarizer over a
// small model, WebFetch's prompt is
// answered by a nested request to the small model, and the main model
// reads that answer, marked untrusted.
func TestSmallModelAnswersWebFetch(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><h1>Release 1.2</h1><p>Adds WebFetch.</p></body></html>")
	}))
	defer site.Close()
	f := newFixture(t)
	eng, err := permission.NewEngine(permission.Options{WorkDir: f.dir, Rules: []permission.RuleSet{{Source: "session", Allow: []string{"WebFetch(domain:127.0.0.1)"}}}})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Script(
		llmtest.ToolReply(llmtest.ToolCall{ID: "toolu_1", Name: "WebFetch", Input: fmt.Sprintf(`{"url":%q,"prompt":"what is new?"}`, site.URL)}),
		llmtest.TextReply("Release 1.2 adds WebFetch."), // the small model
		llmtest.TextReply("It adds WebFetch."),
	)
	ws, err := workspace.Open(context.Background(), workspace.Options{
		Dir: f.dir, NoSettings: true, Decider: eng,
		Pool: &toolset.Options{Registry: toolset.NewRegistry(), Tools: web.Tools(web.Options{Network: netguard.Policy{Allow: []netguard.Class{netguard.Loopback}}})},
		// The CLI's --small-model.
		Summarizer: &web.ModelSummarizer{Provider: f.provider(), Model: "claude-haiku-4-5"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	a := f.agent(t, func(o *testOpts) { o.Workspace = ws })
	_, res, err := collect(t, context.Background(), a, "what is new in the release?")
	if err != nil || res.IsError {
		t.Fatalf("run: %v %+v", err, res)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 3 || reqs[1].Model != "claude-haiku-4-5" || reqs[0].Model != "claude-sonnet-4-5" {
		t.Fatalf("requests: %d, models %v", len(reqs), func() []string {
			var m []string
			for _, r := range reqs {
				m = append(m, r.Model)
			}
			return m
		}())
	}
	if !strings.Contains(reqs[1].Messages[0].Content[0].Text, "Adds WebFetch.") {
		t.Fatalf("the small model did not get the page: %+v", reqs[1].Messages)
	}
	results := reqs[2].ToolResults()
	if len(results) != 1 || !strings.Contains(results[0].Content[0].Text, "Release 1.2 adds WebFetch.") || !strings.Contains(results[0].Content[0].Text, `trust="untrusted"`) {
		t.Fatalf("tool result %+v", results)
	}
}
