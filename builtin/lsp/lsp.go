// Package lsp is the LSP tool: a model asks a real language server (gopls
// built in, others configured) about code. The language-server client and
// the manager of a session's servers are in internal/lsp; this package is
// the tool over them and the names a program needs to configure them.
package lsp

import engine "github.com/gantry-dev/gantry/internal/lsp"

// Manager starts, reuses and stops a session's language servers and keeps
// their diagnostics; see [NewManager].
type Manager = engine.Manager

// Options configure a [Manager]; the zero value uses gopls (when found)
// and the project's .gantry/lsp.json.
type Options = engine.Options

// ServerConfig is one language server: command, file extensions, settings.
type ServerConfig = engine.ServerConfig

// RPCError is an error answer of a language server.
type RPCError = engine.RPCError

// NewManager returns a manager of language servers configured by opts.
func NewManager(opts Options) *Manager { return engine.NewManager(opts) }

// Gopls returns the built-in configuration of gopls.
func Gopls() ServerConfig { return engine.Gopls() }
