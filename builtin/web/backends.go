package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/textutil"
)

// Default endpoints of the HTTP search backends.
const (
	BraveEndpoint  = "https://api.search.brave.com/res/v1/web/search"
	TavilyEndpoint = "https://api.tavily.com/search"
)

// maxSearchBody bounds a search API's response.
const maxSearchBody = 4 << 20

// httpClientOr returns c, or a client with a 30-second timeout.
func httpClientOr(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: 30 * time.Second}
}

// doJSON sends req and decodes a JSON answer into v; an error status
// becomes an error carrying the start of the body.
func doJSON(c *http.Client, req *http.Request, v any) error {
	req.Header.Set("Accept", "application/json")
	resp, err := httpClientOr(c).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchBody))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(body))
		msg = textutil.Truncate(msg, 300)
		return fmt.Errorf("%s answered %s: %s", req.URL.Host, resp.Status, msg)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s answered with JSON that does not decode: %w", req.URL.Host, err)
	}
	return nil
}

// Brave searches with the Brave Search API. APIKey is required.
type Brave struct {
	APIKey string
	// Endpoint is the API's URL ("" = [BraveEndpoint]).
	Endpoint string
	// Client is the HTTP client (nil = one with a 30-second timeout).
	Client *http.Client
}

// Name implements [SearchBackend].
func (b *Brave) Name() string { return "brave" }

// Search implements [SearchBackend].
func (b *Brave) Search(ctx context.Context, q SearchQuery) ([]SearchResult, error) {
	u, err := url.Parse(orString(b.Endpoint, BraveEndpoint))
	if err != nil {
		return nil, err
	}
	v := u.Query()
	v.Set("q", withSites(q.Query, q.AllowedDomains))
	if q.Max > 0 {
		v.Set("count", strconv.Itoa(min(q.Max, 20)))
	}
	u.RawQuery = v.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Subscription-Token", b.APIKey)
	var out struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
				Age         string `json:"age"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := doJSON(b.Client, req, &out); err != nil {
		return nil, err
	}
	rs := make([]SearchResult, 0, len(out.Web.Results))
	for _, r := range out.Web.Results {
		rs = append(rs, SearchResult{Title: stripTags(r.Title), URL: r.URL, Snippet: stripTags(r.Description), Age: r.Age})
	}
	return rs, nil
}

// Tavily searches with the Tavily API. APIKey is required.
type Tavily struct {
	APIKey string
	// Endpoint is the API's URL ("" = [TavilyEndpoint]).
	Endpoint string
	// Client is the HTTP client (nil = one with a 30-second timeout).
	Client *http.Client
}

// Name implements [SearchBackend].
func (t *Tavily) Name() string { return "tavily" }

// Search implements [SearchBackend].
func (t *Tavily) Search(ctx context.Context, q SearchQuery) ([]SearchResult, error) {
	body := map[string]any{"query": q.Query}
	if q.Max > 0 {
		body["max_results"] = min(q.Max, 20)
	}
	if len(q.AllowedDomains) > 0 {
		body["include_domains"] = q.AllowedDomains
	}
	if len(q.BlockedDomains) > 0 {
		body["exclude_domains"] = q.BlockedDomains
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, orString(t.Endpoint, TavilyEndpoint), bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.APIKey)
	var out struct {
		Results []struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			Content       string `json:"content"`
			PublishedDate string `json:"published_date"`
		} `json:"results"`
	}
	if err := doJSON(t.Client, req, &out); err != nil {
		return nil, err
	}
	rs := make([]SearchResult, 0, len(out.Results))
	for _, r := range out.Results {
		rs = append(rs, SearchResult{Title: r.Title, URL: r.URL, Snippet: r.Content, Age: r.PublishedDate})
	}
	return rs, nil
}

// SearXNG searches a SearXNG instance through its JSON API (the instance
// must have "json" among its search formats). BaseURL is required
// ("https://searx.example.org").
type SearXNG struct {
	BaseURL string
	// Client is the HTTP client (nil = one with a 30-second timeout).
	Client *http.Client
}

// Name implements [SearchBackend].
func (s *SearXNG) Name() string { return "searxng" }

// Search implements [SearchBackend].
func (s *SearXNG) Search(ctx context.Context, q SearchQuery) ([]SearchResult, error) {
	if s.BaseURL == "" {
		return nil, errors.New("no SearXNG base URL")
	}
	u, err := url.Parse(strings.TrimSuffix(s.BaseURL, "/") + "/search")
	if err != nil {
		return nil, err
	}
	v := url.Values{}
	v.Set("q", withSites(q.Query, q.AllowedDomains))
	v.Set("format", "json")
	u.RawQuery = v.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	var out struct {
		Results []struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			Content       string `json:"content"`
			PublishedDate string `json:"publishedDate"`
		} `json:"results"`
	}
	if err := doJSON(s.Client, req, &out); err != nil {
		return nil, err
	}
	rs := make([]SearchResult, 0, len(out.Results))
	for _, r := range out.Results {
		rs = append(rs, SearchResult{Title: r.Title, URL: r.URL, Snippet: r.Content, Age: r.PublishedDate})
	}
	return rs, nil
}

// withSites narrows a query to one allowed domain with the site: operator
// both Brave and SearXNG understand (several domains are filtered
// afterwards only: an OR of site: terms is not portable).
func withSites(q string, allowed []string) string {
	if len(allowed) == 1 {
		if h := domainHost(allowed[0]); h != "" && !strings.HasPrefix(h, "*.") {
			return q + " site:" + h
		}
	}
	return q
}

// stripTags removes the <strong> highlighting Brave puts in titles and
// descriptions.
func stripTags(s string) string {
	for _, t := range []string{"<strong>", "</strong>", "<b>", "</b>"} {
		s = strings.ReplaceAll(s, t, "")
	}
	return s
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// SearchFromEnv returns the HTTP search backend the environment names, or
// nil when it names none:
//
//   - GANTRY_WEB_SEARCH chooses one of "brave", "tavily", "searxng" or
//     "none" explicitly;
//   - otherwise the first of BRAVE_SEARCH_API_KEY (Brave), TAVILY_API_KEY
//     (Tavily) and SEARXNG_URL (SearXNG) that is set.
//
// An explicit choice whose key or URL is missing is an error.
func SearchFromEnv(getenv func(string) string) (SearchBackend, error) {
	brave, tavily, searx := getenv("BRAVE_SEARCH_API_KEY"), getenv("TAVILY_API_KEY"), getenv("SEARXNG_URL")
	choice := strings.ToLower(strings.TrimSpace(getenv("GANTRY_WEB_SEARCH")))
	switch choice {
	case "":
		switch {
		case brave != "":
			return &Brave{APIKey: brave}, nil
		case tavily != "":
			return &Tavily{APIKey: tavily}, nil
		case searx != "":
			return &SearXNG{BaseURL: searx}, nil
		}
		return nil, nil
	case "none":
		return nil, nil
	case "brave":
		if brave == "" {
			return nil, errors.New("GANTRY_WEB_SEARCH=brave needs BRAVE_SEARCH_API_KEY")
		}
		return &Brave{APIKey: brave}, nil
	case "tavily":
		if tavily == "" {
			return nil, errors.New("GANTRY_WEB_SEARCH=tavily needs TAVILY_API_KEY")
		}
		return &Tavily{APIKey: tavily}, nil
	case "searxng":
		if searx == "" {
			return nil, errors.New("GANTRY_WEB_SEARCH=searxng needs SEARXNG_URL")
		}
		return &SearXNG{BaseURL: searx}, nil
	case "anthropic":
		return nil, nil // the caller builds it from its provider (see ModelSearch)
	}
	return nil, fmt.Errorf("GANTRY_WEB_SEARCH=%q: want brave, tavily, searxng, anthropic or none", choice)
}
