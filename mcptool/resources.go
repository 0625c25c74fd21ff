package mcptool

import (
	"context"
	"fmt"

	"github.com/gantry-dev/gantry/internal/textutil"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/builtin/mcpres"
)

// Resources returns the manager as the service of the ListMcpResources and
// ReadMcpResource tools; provide it with
// tool.Provide[mcpres.Resources](services, m.Resources()).
func (m *Manager) Resources() mcpres.Resources { return resources{m} }

type resources struct{ m *Manager }

const maxResources = 10_000

// ListResources implements [mcpres.Resources]. Servers without the
// resources capability list nothing.
func (r resources) ListResources(ctx context.Context, name string) ([]mcpres.Resource, error) {
	m := r.m
	names := m.names
	if name != "" {
		if _, ok := m.servers[name]; !ok {
			return nil, fmt.Errorf("%w: %q (configured: %v)", mcpres.ErrUnknownServer, name, m.names)
		}
		names = []string{name}
	}
	var out []mcpres.Resource
	for _, n := range names {
		list, err := m.servers[n].listResources(ctx)
		if err != nil {
			if name != "" {
				return nil, err
			}
			continue
		}
		out = append(out, list...)
	}
	return out, nil
}

func (s *server) listResources(ctx context.Context) ([]mcpres.Resource, error) {
	cs, err := s.live()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	has := s.hasRes
	s.mu.Unlock()
	if !has {
		return nil, nil
	}
	cctx, cancel := context.WithTimeout(ctx, s.m.opts.CallTimeout)
	defer cancel()
	var out []mcpres.Resource
	for res, err := range cs.Resources(cctx, nil) {
		if err != nil {
			return nil, s.callErr(ctx, cctx, cs, "resources/list", err)
		}
		r := mcpres.Resource{Server: s.name, URI: res.URI, Name: res.Name, Title: res.Title,
			Description: textutil.Truncate(res.Description, MaxDescription), MIMEType: res.MIMEType}
		if res.Size > 0 {
			size := res.Size
			r.Size = &size
		}
		out = append(out, r)
		if len(out) >= maxResources {
			break
		}
	}
	return out, nil
}

// ReadResource implements [mcpres.Resources].
func (r resources) ReadResource(ctx context.Context, name, uri string) ([]mcpres.Contents, error) {
	s, ok := r.m.servers[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q (configured: %v)", mcpres.ErrUnknownServer, name, r.m.names)
	}
	cs, err := s.live()
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, s.m.opts.CallTimeout)
	defer cancel()
	res, err := cs.ReadResource(cctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, s.callErr(ctx, cctx, cs, "resources/read "+uri, err)
	}
	out := make([]mcpres.Contents, 0, len(res.Contents))
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		out = append(out, mcpres.Contents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text, Blob: c.Blob})
	}
	return out, nil
}
