package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/mcpres"
	"github.com/gantry-dev/gantry/mcptool"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// mcpSession is the MCP servers of one run.
type mcpSession struct {
	m *mcptool.Manager

	mu   sync.Mutex
	pool *toolset.Pool // set once the agent's pool exists
}

// refresh puts a server's current tools in the pool (after
// tools/list_changed, a disconnect or a reconnect).
func (s *mcpSession) refresh(server string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pool == nil {
		return
	}
	if tools := s.m.ServerTools(server); len(tools) > 0 {
		s.pool.AddMCP(server, tools...)
	} else {
		s.pool.RemoveMCP(server)
	}
}

func (s *mcpSession) Close() error { return s.m.Close() }

// attachMCP connects the MCP servers of the project's .mcp.json (only when
// the folder is trusted, and only those whose definitions the user
// approved: SECURITY-CASES 34) and of --mcp-config files, and provides
// their resources to the tools. It returns nil when no server is
// configured. A project server held back by the approval check, or one
// that fails to connect, is reported on stderr; the run goes on without
// its tools. --trust approves the project's servers as they are; at a
// terminal the user is asked.
func attachMCP(ctx context.Context, a *app, f *runFlags, saf *safety, dir string, services *tool.Services) (*mcpSession, error) {
	trusted := saf.settings != nil && saf.settings.Trusted
	ask := trusted && !f.trust && isTerminal(a.stdin) && isTerminal(a.stderr)
	cfg, err := loadMCPConfig(ctx, a, dir, trusted, f.trust, ask, f.mcpConfig)
	if err != nil {
		return nil, err
	}
	if len(cfg.Servers) == 0 {
		return nil, nil
	}
	s := &mcpSession{}
	m, err := mcptool.NewManager(cfg, &mcptool.Options{Dir: dir, Getenv: a.getenv, OnToolsChanged: func(server string) { s.refresh(server) }})
	if err != nil {
		return nil, err
	}
	s.m = m
	if err := m.Start(ctx); err != nil {
		fmt.Fprintf(a.stderr, "gantry: some MCP servers are unavailable: %v\n", err)
	}
	tool.Provide[mcpres.Resources](services, m.Resources())
	return s, nil
}

// addMCPTools adds every connected server's tools to the agent's pool.
func addMCPTools(ag *agent.Agent, s *mcpSession) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pool = ag.Pool()
	for _, st := range s.m.Servers() {
		if tools := s.m.ServerTools(st.Name); len(tools) > 0 {
			if err := ag.Pool().AddMCP(st.Name, tools...); err != nil {
				return fmt.Errorf("MCP server %s: %w", st.Name, err)
			}
		}
	}
	return nil
}
