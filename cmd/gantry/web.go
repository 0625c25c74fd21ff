package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/gantry-dev/gantry/builtin/web"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/netguard"
)

// webFlags configure WebFetch and WebSearch.
type webFlags struct {
	allow      []string
	docs       bool
	smallModel string
}

func (w *webFlags) add(fl *pflag.FlagSet, withModel bool) {
	fl.StringSliceVar(&w.allow, "web-allow", nil, "address classes (loopback, private, link-local, cgnat, metadata…), IPs or CIDR prefixes WebFetch may reach besides public addresses, e.g. loopback for a local server")
	fl.BoolVar(&w.docs, "web-docs-preapproved", false, "let WebFetch read well-known documentation hosts (go.dev, docs.python.org, …) without a permission rule")
	if withModel {
		fl.StringVar(&w.smallModel, "small-model", "", "small, fast model of the same provider for side tasks (WebFetch answers its prompt with it), e.g. claude-haiku-4-5 (default GANTRY_SMALL_MODEL)")
	}
}

// options returns the web tools' options: the address policy, the
// preapproved hosts, and the search backend the environment names, else
// the Anthropic server-side search when the provider is Anthropic.
func (w *webFlags) options(a *app, prov llm.Provider, model string) (web.Options, error) {
	pol, err := netguard.ParsePolicy(w.allow)
	if err != nil {
		return web.Options{}, &exitError{code: 2, err: err}
	}
	o := web.Options{Network: pol}
	if w.docs {
		o.Preapproved = web.DocsHosts
	}
	o.Search, err = web.SearchFromEnv(a.getenv)
	if err != nil {
		return web.Options{}, &exitError{code: 2, err: err}
	}
	choice := strings.ToLower(strings.TrimSpace(a.getenv("GANTRY_WEB_SEARCH")))
	if _, ok := prov.(*anthropic.Provider); ok && o.Search == nil && (choice == "" || choice == "anthropic") {
		m := w.small(a)
		if m == "" {
			m = model
		}
		o.Search = &web.ModelSearch{Provider: prov, Model: m}
	}
	return o, nil
}

// small returns the small model: the flag, else GANTRY_SMALL_MODEL.
func (w *webFlags) small(a *app) string {
	if w.smallModel != "" {
		return w.smallModel
	}
	return a.getenv("GANTRY_SMALL_MODEL")
}
