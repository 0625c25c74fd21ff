package toolset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/gantry-dev/gantry/tool"
)

// maxSearchResults caps max_results of one ToolSearch call.
const maxSearchResults = 50

const searchDescription = `Loads deferred tools: the tools listed below by name only. Call it before the first use of one; it returns their full definitions, and they are sent in full from the next request on.
Query: "select:A,B" loads tools by name; "mcp__server" lists a server's tools; otherwise keywords rank tools by name, hint and description (+word requires a word).`

// searchInput is the input of ToolSearch (exactly the compatibility shape).
type searchInput struct {
	Query      string  `json:"query" jsonschema:"select:A,B to load tools by name; mcp__server to list a server's tools; otherwise keywords"`
	MaxResults float64 `json:"max_results,omitempty" jsonschema:"the most tools a keyword query loads (default 5)"`
}

// searchSchema is inferred on first use, not at package init.
var searchSchema = sync.OnceValue(func() json.RawMessage {
	s, err := tool.InferSchema[searchInput]()
	if err != nil {
		panic(err)
	}
	return s
})

// searchTool is the ToolSearch tool of one pool. Its description lists the
// deferred tools of the pool's view when the view was taken.
type searchTool struct {
	p    *Pool
	spec tool.Spec

	mu       sync.Mutex
	last     *searchTool // the last listing made, reused while the deferred tools are the same
	lastKeys []*member   // the deferred members last listed
}

func newSearchTool(p *Pool) *searchTool {
	return &searchTool{p: p, spec: tool.Spec{
		Name:        ToolSearchName,
		Aliases:     []string{DiscoverToolsName},
		Description: searchDescription,
		InputSchema: searchSchema(),
		Traits:      tool.ReadOnlyTraits,
		Annotations: tool.Annotations{Title: "Tool search", ReadOnlyHint: true, DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
	}}
}

// withListing returns a ToolSearch whose description ends with the listing
// of deferred tools. While the deferred tools stay the same, every view
// gets the same value (one spec, not one per request).
func (s *searchTool) withListing(list []entry) *searchTool {
	s.mu.Lock()
	defer s.mu.Unlock()
	same := s.last != nil
	n := 0
	for _, e := range list {
		if e.deferred {
			same = same && n < len(s.lastKeys) && s.lastKeys[n] == e.m
			n++
		}
	}
	if same && n == len(s.lastKeys) {
		return s.last
	}
	c := &searchTool{p: s.p, spec: s.spec}
	c.spec.Description = searchDescription + "\n\n" + listing(list)
	s.lastKeys = s.lastKeys[:0]
	for _, e := range list {
		if e.deferred {
			s.lastKeys = append(s.lastKeys, e.m)
		}
	}
	s.last = c
	return c
}

// listing renders the deferred tools: one line per tool, name and hint.
func listing(list []entry) string {
	var b strings.Builder
	b.WriteString("Deferred tools:")
	for _, e := range list {
		if !e.deferred {
			continue
		}
		b.WriteString("\n- ")
		b.WriteString(e.m.name)
		if h := strings.TrimSpace(e.spec.Defer.SearchHint); h != "" {
			b.WriteString(": ")
			b.WriteString(h)
		}
	}
	return b.String()
}

// DeferredListing returns the short listing of deferred tools (names and
// search hints) that the ToolSearch description carries, for callers that
// want it elsewhere too (a system prompt). It is "" when nothing is deferred.
func (p *Pool) DeferredListing() string {
	list, search := p.snapshot()
	if !search {
		return ""
	}
	return listing(list)
}

func (s *searchTool) Spec() *tool.Spec { return &s.spec }

// Traits implements [tool.Traiter]: ToolSearch only reads (loading changes
// what later requests carry, not the world).
func (s *searchTool) Traits(json.RawMessage) tool.Traits { return tool.ReadOnlyTraits }

func (s *searchTool) DescribeCall(input json.RawMessage) string {
	var in searchInput
	if json.Unmarshal(input, &in) == nil && in.Query != "" {
		return "Search tools: " + in.Query
	}
	return ToolSearchName
}

func (s *searchTool) Call(ctx context.Context, env *tool.Env, input json.RawMessage) (*tool.Result, error) {
	var in searchInput
	if len(input) > 0 {
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, fmt.Errorf("invalid input: %w", err)
		}
	}
	res, err := s.p.Search(in.Query, int(in.MaxResults))
	if err != nil {
		return tool.ErrorResult(err), nil
	}
	return tool.TextResult(res.Text()), nil
}

// SearchResult is what one ToolSearch query found.
type SearchResult struct {
	// Query is the query as given.
	Query string
	// Tools are the tools loaded, best first (in the named order for
	// select:).
	Tools []*tool.Spec
	// Missing are the names of a select: query that matched no tool.
	Missing []string
	// Deferred are the names of every deferred tool, for the no-match
	// message.
	Deferred []string
}

// Text renders the result for the model: the loaded tools' full definitions
// (name, description, parameters as JSON) or a message saying what to try.
func (r *SearchResult) Text() string {
	var b strings.Builder
	if len(r.Tools) == 0 {
		fmt.Fprintf(&b, "No deferred tool matched %q.", r.Query)
		if len(r.Deferred) > 0 {
			fmt.Fprintf(&b, " Deferred tools: %s.", strings.Join(r.Deferred, ", "))
		}
		if len(r.Missing) > 0 {
			fmt.Fprintf(&b, " Unknown: %s.", strings.Join(r.Missing, ", "))
		}
		return b.String()
	}
	names := make([]string, len(r.Tools))
	for i, s := range r.Tools {
		names[i] = s.Name
	}
	fmt.Fprintf(&b, "Loaded %d tool(s): %s. You can call them now; their definitions:\n<functions>\n", len(r.Tools), strings.Join(names, ", "))
	for _, s := range r.Tools {
		b.WriteString("<function>")
		b.Write(definitionJSON(s))
		b.WriteString("</function>\n")
	}
	b.WriteString("</functions>")
	if len(r.Missing) > 0 {
		fmt.Fprintf(&b, "\nNo tool named: %s.", strings.Join(r.Missing, ", "))
	}
	return b.String()
}

// definitionJSON is a tool's definition as the model reads it in a
// ToolSearch result.
func definitionJSON(s *tool.Spec) []byte {
	def := struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}{s.Name, FullDescription(s), s.InputSchema}
	if len(def.Parameters) == 0 {
		def.Parameters = tool.EmptyObjectSchema
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(def); err != nil {
		return []byte(fmt.Sprintf(`{"name":%q}`, s.Name))
	}
	return bytes.TrimSpace(buf.Bytes())
}

// Search runs a ToolSearch query against the pool's current view and marks
// the tools found as loaded. Query forms: "select:A,B" (names or aliases;
// any tool of the view may be named, deferred ones are loaded);
// "mcp__server" optionally followed by keywords (the server's deferred
// tools); otherwise keywords over the deferred tools, ranked: the whole name
// > a part of the name > the search hint > the description, ties broken by
// name. A keyword with a leading + is required. max <= 0 means
// [Options.SearchResults].
func (p *Pool) Search(query string, max int) (*SearchResult, error) {
	q := strings.TrimSpace(query)
	if q == "" {
		return nil, fmt.Errorf("empty query: use select:Name1,Name2, mcp__server or keywords")
	}
	if max <= 0 {
		max = p.core.opts.SearchResults
	}
	max = min(max, maxSearchResults)
	list, _ := p.snapshot()
	res := &SearchResult{Query: query}
	var deferred []entry
	for _, e := range list {
		if e.deferred {
			deferred = append(deferred, e)
			res.Deferred = append(res.Deferred, e.m.name)
		}
	}
	var found []entry
	if rest, ok := cutPrefixFold(q, "select:"); ok {
		for _, n := range strings.Split(rest, ",") {
			n = strings.TrimSpace(n)
			if n == "" {
				continue
			}
			e, ok := findEntry(list, n)
			if !ok {
				res.Missing = append(res.Missing, n)
				continue
			}
			if !slices.ContainsFunc(found, func(x entry) bool { return x.m == e.m }) {
				found = append(found, e)
			}
		}
	} else {
		found = rank(deferred, q, max)
	}
	var load []string
	for _, e := range found {
		res.Tools = append(res.Tools, e.spec)
		if e.deferred {
			load = append(load, e.m.name)
		}
	}
	p.Load(load...)
	return res, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// findEntry finds a tool of the view by name or alias: exact first, then
// case-insensitive.
func findEntry(list []entry, name string) (entry, bool) {
	for _, e := range list {
		if slices.Contains(e.m.names(), name) {
			return e, true
		}
	}
	for _, e := range list {
		if slices.ContainsFunc(e.m.names(), func(n string) bool { return strings.EqualFold(n, name) }) {
			return e, true
		}
	}
	return entry{}, false
}

// Scores of one keyword.
const (
	scoreName    = 20 // the whole name (or the MCP tool part)
	scorePart    = 10 // one part of the name
	scorePartPre = 6  // a prefix of a part, or inside the name
	scoreHint    = 4  // a word of the search hint
	scoreHintSub = 3  // inside the search hint
	scoreDesc    = 2  // a word of the description
	scoreDescSub = 1  // inside the description
)

// rank scores the deferred tools against a keyword query.
func rank(list []entry, q string, max int) []entry {
	terms := strings.Fields(strings.ToLower(q))
	var prefix string
	if len(terms) > 0 && strings.HasPrefix(terms[0], MCPPrefix) {
		prefix, terms = terms[0], terms[1:]
	}
	type scored struct {
		e     entry
		score int
	}
	var out []scored
	for _, e := range list {
		lname := strings.ToLower(e.m.name)
		if prefix != "" && !strings.HasPrefix(lname, prefix) {
			continue
		}
		score, ok := scoreEntry(e, terms)
		if !ok || (len(terms) > 0 && score == 0) {
			continue
		}
		out = append(out, scored{e, score})
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return strings.Compare(a.e.m.name, b.e.m.name)
	})
	if len(out) > max {
		out = out[:max]
	}
	res := make([]entry, len(out))
	for i, s := range out {
		res[i] = s.e
	}
	return res
}

// scoreEntry sums the scores of terms for e; ok is false when a required
// (+) term does not match.
func scoreEntry(e entry, terms []string) (score int, ok bool) {
	names := e.m.names()
	var parts []string
	var whole []string
	for _, n := range names {
		ln := strings.ToLower(n)
		whole = append(whole, ln)
		if _, t, isMCP := SplitMCPName(n); isMCP {
			whole = append(whole, strings.ToLower(t))
		}
		parts = append(parts, nameParts(n)...)
	}
	hint := strings.ToLower(e.spec.Defer.SearchHint)
	desc := strings.ToLower(e.spec.Description)
	hintWords, descWords := words(hint), words(desc)
	for _, t := range terms {
		required := strings.HasPrefix(t, "+")
		t = strings.TrimPrefix(t, "+")
		if t == "" {
			continue
		}
		s := 0
		switch {
		case slices.Contains(whole, t):
			s = scoreName
		case slices.Contains(parts, t):
			s = scorePart
		case slices.ContainsFunc(parts, func(p string) bool { return strings.HasPrefix(p, t) }) ||
			slices.ContainsFunc(whole, func(w string) bool { return strings.Contains(w, t) }):
			s = scorePartPre
		case hintWords[t]:
			s = scoreHint
		case strings.Contains(hint, t):
			s = scoreHintSub
		case descWords[t]:
			s = scoreDesc
		case strings.Contains(desc, t):
			s = scoreDescSub
		}
		if s == 0 && required {
			return 0, false
		}
		score += s
	}
	return score, true
}

// nameParts splits a tool name into lower-case words: at '_', '-' and
// camel-case boundaries ("mcp__github__createIssue" → mcp, github, create,
// issue; "WebFetch" → web, fetch).
func nameParts(name string) []string {
	var parts []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			parts = append(parts, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-':
			flush()
			continue
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
			i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return parts
}

// words returns the set of words (letters and digits) of s.
func words(s string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		m[w] = true
	}
	return m
}
