// Package mcpres holds the built-in tools ListMcpResources and
// ReadMcpResource, which let the model list and read the resources of the
// connected MCP servers.
//
// The tools reach the servers through a [Resources] service found in the
// call's environment (tool.Use[mcpres.Resources]); mcptool.Manager provides
// one (mcptool.Manager.Resources). Without the service a call ends in a
// clear error result. The package does not import the MCP client.
package mcpres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/tool"
)

// Resource is one resource a server lists.
type Resource struct {
	Server      string `json:"server"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Size        *int64 `json:"size,omitempty"`
}

// Contents is one part of a read resource: Text for text resources, Blob
// for binary ones.
type Contents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     []byte `json:"-"`
}

// Resources is the service the tools use. Implementations must be safe for
// concurrent use.
type Resources interface {
	// ListResources lists the resources of one server, or of every
	// connected server when server is "". An unknown server is an error
	// wrapping [ErrUnknownServer]; with server "" a server that cannot be
	// listed is skipped.
	ListResources(ctx context.Context, server string) ([]Resource, error)
	// ReadResource reads one resource of a server.
	ReadResource(ctx context.Context, server, uri string) ([]Contents, error)
}

// ErrUnknownServer is wrapped by errors about a server name that is not
// configured.
var ErrUnknownServer = errors.New("unknown MCP server")

// Tools returns ListMcpResources and ReadMcpResource. Both are read-only
// and concurrency-safe: they change nothing on this machine (a server is
// untrusted, but reading its resources is what listing its tools is too).
func Tools() []tool.Tool {
	return []tool.Tool{listTool(), readTool()}
}

type listInput struct {
	Server string `json:"server,omitempty" jsonschema:"Optional server name to list resources of; all servers when omitted"`
}

type readInput struct {
	Server string `json:"server" jsonschema:"The MCP server name"`
	URI    string `json:"uri" jsonschema:"The resource URI to read"`
}

// The tools are built on first use, not at package init (schema
// inference is not free, and most processes never list MCP resources).
var listTool = sync.OnceValue(func() tool.Tool {
	return tool.Must(tool.New("ListMcpResources",
		"Lists the resources (files, records, documents) offered by the connected MCP servers, as JSON with server, uri, name, description and mimeType. Pass server to list one server only.",
		func(ctx context.Context, env *tool.Env, in listInput) (*tool.Result, error) {
			rs, err := tool.Use[Resources](env)
			if err != nil {
				return nil, err
			}
			list, err := rs.ListResources(ctx, in.Server)
			if err != nil {
				return nil, err
			}
			if len(list) == 0 {
				if in.Server != "" {
					return tool.TextResult(fmt.Sprintf("No resources found on MCP server %q.", in.Server)), nil
				}
				return tool.TextResult("No resources found. MCP servers may still provide tools even if they have no resources."), nil
			}
			r, err := tool.JSONResult(list)
			if err != nil {
				return nil, err
			}
			r.Structured = list
			return r, nil
		},
		tool.ReadOnly(),
		tool.DescribeFunc(func(in listInput) string {
			if in.Server == "" {
				return "List MCP resources"
			}
			return "List MCP resources of " + in.Server
		}),
		tool.WithDefer(tool.Deferral{ShouldDefer: true, SearchHint: "list resources of connected MCP servers"}),
		tool.WithAliases("ListMcpResourcesTool"), // the reference agent's name
	))
})

var readTool = sync.OnceValue(func() tool.Tool {
	return tool.Must(tool.New("ReadMcpResource",
		"Reads a resource of an MCP server by server name and URI (as listed by ListMcpResources). Text is returned inline; images as images; other binary contents are saved to a file whose path is returned.",
		func(ctx context.Context, env *tool.Env, in readInput) (*tool.Result, error) {
			rs, err := tool.Use[Resources](env)
			if err != nil {
				return nil, err
			}
			parts, err := rs.ReadResource(ctx, in.Server, in.URI)
			if err != nil {
				return nil, err
			}
			return contentsResult(env, in, parts)
		},
		tool.ReadOnly(),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in readInput) error {
			if strings.TrimSpace(in.Server) == "" || strings.TrimSpace(in.URI) == "" {
				return errors.New("server and uri must not be empty")
			}
			return nil
		}),
		tool.DescribeFunc(func(in readInput) string { return "Read " + in.URI + " from " + in.Server }),
		tool.WithDefer(tool.Deferral{ShouldDefer: true, SearchHint: "read a resource of an MCP server by uri"}),
		tool.WithAliases("ReadMcpResourceTool"), // the reference agent's name
	))
})

// contentsResult turns the parts of a resource into content blocks.
func contentsResult(env *tool.Env, in readInput, parts []Contents) (*tool.Result, error) {
	if len(parts) == 0 {
		return tool.TextResult(fmt.Sprintf("Resource %s on %s is empty.", in.URI, in.Server)), nil
	}
	res := &tool.Result{}
	for i, p := range parts {
		uri := p.URI
		if uri == "" {
			uri = in.URI
		}
		switch {
		case p.Blob == nil:
			res.Content = append(res.Content, tool.EmbeddedText(uri, p.MIMEType, p.Text))
		case strings.HasPrefix(p.MIMEType, "image/"):
			res.Content = append(res.Content, tool.Image(p.Blob, p.MIMEType))
		default:
			path, err := saveBlob(env, in.Server, i, p)
			if err != nil {
				return nil, err
			}
			res.Content = append(res.Content, tool.Text(fmt.Sprintf(
				"Binary contents of %s (%s, %d bytes) saved to %s", uri, orUnknown(p.MIMEType), len(p.Blob), path)))
		}
	}
	return res, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// saveBlob writes binary contents to the session's tool results directory
// (or the system temporary directory) and returns the path.
func saveBlob(env *tool.Env, server string, i int, p Contents) (string, error) {
	dir := env.ToolResultsDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "gantry-mcp-resources")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("save resource: %w", err)
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf("mcp-%s-%d-*%s", safeName(server), i, extFor(p.MIMEType)))
	if err != nil {
		return "", fmt.Errorf("save resource: %w", err)
	}
	if _, err := f.Write(p.Blob); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fmt.Errorf("save resource: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("save resource: %w", err)
	}
	return f.Name(), nil
}

func extFor(mime string) string {
	switch mime {
	case "application/pdf":
		return ".pdf"
	case "application/json":
		return ".json"
	case "application/zip":
		return ".zip"
	case "audio/wav", "audio/x-wav":
		return ".wav"
	case "audio/mpeg":
		return ".mp3"
	}
	return ".bin"
}

// safeName keeps the letters, digits, '-' and '_' of a server name for use
// in a file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}
