// Package endpoint resolves what every model adapter's Options share: the
// API key and base URL (the option, else the provider's environment
// variable, else the default) and the HTTP client. One rule, so that
// anthropic.Options and openai.Options read the environment alike.
package endpoint

import (
	"net/http"
	"os"

	"github.com/gantry-dev/gantry/llm/internal/httpclient"
)

// Options are the shared fields of an adapter's Options.
type Options struct {
	// APIKey is the key to send; "" means the KeyVar environment variable
	// (which may itself be unset: no key).
	APIKey string
	// BaseURL is the API's address; "" means the URLVar environment
	// variable when set and not empty, else the default.
	BaseURL string
	// LookupEnv reads the environment (nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// HTTPClient sends the requests (nil: the adapters' shared default,
	// see package httpclient).
	HTTPClient *http.Client
}

// Vars name a provider's environment variables and default address.
type Vars struct {
	KeyVar, URLVar, DefaultURL string
}

// Resolved is what an adapter builds its SDK client from.
type Resolved struct {
	APIKey, BaseURL string
	HTTPClient      *http.Client
}

// Resolve applies the precedence of [Options] for the provider v.
func Resolve(o Options, v Vars) Resolved {
	lookup := o.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	r := Resolved{APIKey: o.APIKey, BaseURL: o.BaseURL, HTTPClient: o.HTTPClient}
	if r.APIKey == "" {
		r.APIKey, _ = lookup(v.KeyVar)
	}
	if r.BaseURL == "" {
		r.BaseURL, _ = lookup(v.URLVar)
	}
	if r.BaseURL == "" {
		r.BaseURL = v.DefaultURL
	}
	if r.HTTPClient == nil {
		r.HTTPClient = httpclient.New()
	}
	return r
}
