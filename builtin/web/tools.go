package web

import "github.com/gantry-dev/gantry/tool"

// Tools returns WebFetch, and WebSearch when opts has a search backend.
// The tools share one cache and one HTTP client; they are safe to share
// between sessions.
func Tools(opts Options) []tool.Tool {
	f := newFetcher(opts)
	out := []tool.Tool{newWebFetch(f)}
	if opts.Search != nil {
		out = append(out, newWebSearch(opts.Search, f.opts.SearchResults))
	}
	return out
}
