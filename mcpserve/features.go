package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// Resource is a resource the server offers: its description (URI, name,
// MIME type, ...) and the handler that reads it. Read is called with the
// requested URI; it should return mcp.ResourceNotFoundError for a URI it
// does not know.
type Resource struct {
	Resource *mcp.Resource
	Read     mcp.ResourceHandler
}

// ResourceTemplate is a family of resources named by an RFC 6570 URI
// template ("file:///logs/{day}"); Read receives the concrete URI.
type ResourceTemplate struct {
	Template *mcp.ResourceTemplate
	Read     mcp.ResourceHandler
}

// Prompt is a prompt the server offers and the handler that renders it
// from the client's arguments. A prompts/get that lacks a required argument
// is rejected (invalid params) before Get is called.
type Prompt struct {
	Prompt *mcp.Prompt
	Get    mcp.PromptHandler
}

// checkFeatures validates the resources, templates and prompts of o so
// that New returns an error where the SDK would panic.
func checkFeatures(o *Options) error {
	uris := map[string]bool{}
	for i, r := range o.Resources {
		if r.Resource == nil || r.Read == nil {
			return fmt.Errorf("mcpserve: resource %d: needs a description and a Read handler", i)
		}
		u, err := url.Parse(r.Resource.URI)
		if err != nil || u.Scheme == "" {
			return fmt.Errorf("mcpserve: resource %q: the URI must be absolute", r.Resource.URI)
		}
		if r.Resource.Name == "" {
			return fmt.Errorf("mcpserve: resource %q: needs a name", r.Resource.URI)
		}
		if uris[r.Resource.URI] {
			return fmt.Errorf("mcpserve: duplicate resource %q", r.Resource.URI)
		}
		uris[r.Resource.URI] = true
	}
	tmpls := map[string]bool{}
	for i, t := range o.ResourceTemplates {
		if t.Template == nil || t.Read == nil {
			return fmt.Errorf("mcpserve: resource template %d: needs a description and a Read handler", i)
		}
		if _, err := uritemplate.New(t.Template.URITemplate); err != nil {
			return fmt.Errorf("mcpserve: resource template %q: %w", t.Template.URITemplate, err)
		}
		if !absoluteURI().MatchString(t.Template.URITemplate) {
			return fmt.Errorf("mcpserve: resource template %q: the URI must be absolute", t.Template.URITemplate)
		}
		if t.Template.Name == "" {
			return fmt.Errorf("mcpserve: resource template %q: needs a name", t.Template.URITemplate)
		}
		if tmpls[t.Template.URITemplate] {
			return fmt.Errorf("mcpserve: duplicate resource template %q", t.Template.URITemplate)
		}
		tmpls[t.Template.URITemplate] = true
	}
	names := map[string]bool{}
	for i, p := range o.Prompts {
		if p.Prompt == nil || p.Get == nil || p.Prompt.Name == "" {
			return fmt.Errorf("mcpserve: prompt %d: needs a named description and a Get handler", i)
		}
		if names[p.Prompt.Name] {
			return fmt.Errorf("mcpserve: duplicate prompt %q", p.Prompt.Name)
		}
		names[p.Prompt.Name] = true
	}
	return nil
}

func addFeatures(s *mcp.Server, o *Options) {
	for _, r := range o.Resources {
		s.AddResource(r.Resource, r.Read)
	}
	for _, t := range o.ResourceTemplates {
		s.AddResourceTemplate(t.Template, t.Read)
	}
	for _, p := range o.Prompts {
		s.AddPrompt(p.Prompt, requireArguments(p.Prompt, p.Get))
	}
}

// requireArguments wraps get with the check of p's required arguments.
func requireArguments(p *mcp.Prompt, get mcp.PromptHandler) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		for _, a := range p.Arguments {
			if a == nil || !a.Required {
				continue
			}
			var args map[string]string
			if req.Params != nil {
				args = req.Params.Arguments
			}
			if _, ok := args[a.Name]; !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %q: missing required argument %q", p.Name, a.Name)}
			}
		}
		return get(ctx, req)
	}
}

// absoluteURI matches the scheme of an absolute URI (RFC 3986).
var absoluteURI = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`) }) // compiled on first use, not at init

// subscriptions decides which URIs a client may subscribe to; the SDK
// keeps the subscribers.
type subscriptions struct {
	uris  map[string]bool
	tmpls []*uritemplate.Template
}

func newSubscriptions(rs []Resource, ts []ResourceTemplate) (*subscriptions, error) {
	s := &subscriptions{uris: map[string]bool{}}
	for _, r := range rs {
		s.uris[r.Resource.URI] = true
	}
	for _, t := range ts {
		tt, err := uritemplate.New(t.Template.URITemplate)
		if err != nil {
			return nil, fmt.Errorf("mcpserve: resource template %q: %w", t.Template.URITemplate, err)
		}
		s.tmpls = append(s.tmpls, tt)
	}
	return s, nil
}

// known reports whether uri names a served resource.
func (s *subscriptions) known(uri string) bool {
	if s.uris[uri] {
		return true
	}
	for _, t := range s.tmpls {
		if t.Regexp().MatchString(uri) {
			return true
		}
	}
	return false
}

func (s *subscriptions) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if req.Params == nil || !s.known(req.Params.URI) {
		uri := ""
		if req.Params != nil {
			uri = req.Params.URI
		}
		return mcp.ResourceNotFoundError(uri)
	}
	return nil
}

func (s *subscriptions) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	if req.Params == nil || req.Params.URI == "" {
		return errors.New("mcpserve: unsubscribe needs a URI")
	}
	return nil
}

// ResourceUpdated tells the clients subscribed to uri that the resource
// changed (notifications/resources/updated). It needs
// [Options.Subscriptions]; without subscribers it sends nothing.
func (s *Server) ResourceUpdated(ctx context.Context, uri string) error {
	if s.subs == nil {
		return errors.New("mcpserve: ResourceUpdated needs Options.Subscriptions")
	}
	if err := s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
		return fmt.Errorf("mcpserve: %w", err)
	}
	return nil
}
