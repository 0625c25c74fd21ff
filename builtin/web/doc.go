// Package web holds the built-in tools WebFetch and WebSearch.
//
// WebFetch fetches one URL and answers a prompt about it. Every connection
// goes through a [netguard.Dialer]: names are resolved once, every address
// is checked against the address policy (public addresses only by
// default: no loopback, private, link-local, CGNAT, multicast, unspecified
// or cloud-metadata address, IPv4-mapped IPv6 included) and the connection
// is pinned to the checked address, so redirects and DNS rebinding are
// covered. http is upgraded to https; redirects are followed on the same
// host only, a redirect to another host is returned to the model as a note
// (fetching it is a new call, under that host's permission rules). Bodies
// are capped (10 MB), connects and whole fetches are timed. HTML becomes
// Markdown (scripts, styles and navigation stripped; tables kept), text and
// JSON are returned as they are, PDFs go through the Read tool's extractor,
// images come back as image blocks, anything else is refused. Results are
// cached for 15 minutes in an LRU bounded by bytes.
//
// The page is untrusted: it is returned inside a <web_page> wrapper with a
// note saying so. With a [Summarizer] (a small side model) in the call's
// services the prompt is answered by it; without one the Markdown is
// returned in pages (offset) with the prompt stated above it.
//
// Permission: WebFetch is read-only and concurrency-safe, but it is never
// allowed for being read-only: an unknown host asks, WebFetch(domain:…)
// rules allow or deny hosts, and [Options.Preapproved] (opt-in, for
// example [DocsHosts]) lists hosts allowed without a rule.
//
// WebSearch returns titles, URLs and snippets from a [SearchBackend]:
// Brave Search, Tavily, a SearXNG instance (JSON API), or the Anthropic
// server-side web search tool through an [llm.Provider]. Without a backend
// the tool is not offered. allowed_domains and blocked_domains are applied
// to the results whatever the backend does with them.
package web
