package lsp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	engine "github.com/gantry-dev/gantry/internal/lsp"

	"github.com/gantry-dev/gantry/tool"
)

// The operations of [Input].Operation.
const (
	OpDefinition      = engine.OpDefinition
	OpReferences      = engine.OpReferences
	OpHover           = engine.OpHover
	OpDocumentSymbol  = engine.OpDocumentSymbol
	OpWorkspaceSymbol = engine.OpWorkspaceSymbol
	OpImplementation  = engine.OpImplementation
	OpPrepareCalls    = engine.OpPrepareCalls
	OpIncomingCalls   = engine.OpIncomingCalls
	OpOutgoingCalls   = engine.OpOutgoingCalls
)

// Input is the input of the LSP tool.
type Input struct {
	Operation string  `json:"operation" enum:"goToDefinition,findReferences,hover,documentSymbol,workspaceSymbol,goToImplementation,prepareCallHierarchy,incomingCalls,outgoingCalls" jsonschema:"The LSP operation to perform"`
	FilePath  string  `json:"filePath" jsonschema:"The file to operate on: an absolute path, or a path relative to the working directory"`
	Line      float64 `json:"line" jsonschema:"The line number (1-based, as shown in editors)"`
	Character float64 `json:"character" jsonschema:"The character offset in the line (1-based, as shown in editors)"`
}

const description = `Asks a language server (a real one: gopls for Go, others as configured) about code.

Operations, all at filePath:line:character (1-based, as shown in editors):
- goToDefinition: where the symbol is defined.
- findReferences: every reference to the symbol.
- hover: the symbol's type, signature and documentation.
- documentSymbol: every symbol of the file (line and character are ignored).
- workspaceSymbol: symbols of the whole workspace matching the identifier at the position.
- goToImplementation: implementations of an interface or method.
- prepareCallHierarchy: the call-hierarchy item at the position.
- incomingCalls: the functions that call the function at the position.
- outgoingCalls: the functions the function at the position calls.

Results are path:line:col lines (paths relative to the project) with a snippet of the source line. Prefer this to Grep for navigating code: it follows types, not text.`

// New returns the LSP tool. It is read-only and concurrency-safe; it needs
// a *Manager in the call's services (tool.Use[*lsp.Manager]), which
// [SessionServices]-style setup provides.
func New() tool.Tool {
	return tool.Must(tool.New("LSP", description, call,
		tool.ReadOnly(),
		tool.WithTimeout(2*time.Minute),
		tool.WithDefer(tool.Deferral{ShouldDefer: true, SearchHint: "code intelligence definition references hover symbols language server"}),
		tool.ValidateFunc(func(_ context.Context, env *tool.Env, in Input) error {
			if _, err := absPath(env, in.FilePath); err != nil {
				return err
			}
			if in.Operation == OpDocumentSymbol {
				return nil
			}
			if in.Line < 1 || in.Character < 1 || in.Line != math.Trunc(in.Line) || in.Character != math.Trunc(in.Character) {
				return errors.New("line and character must be whole numbers from 1 (1-based, as shown in editors)")
			}
			return nil
		}),
		// The file is read (and quoted in snippets): the permission layer
		// applies Read rules, the working directories and protected paths
		// to it like to a Read call.
		tool.AccessFunc(func(in Input) (tool.Access, error) {
			return tool.Access{Reads: []string{in.FilePath}}, nil
		}),
		tool.DescribeFunc(func(in Input) string {
			return fmt.Sprintf("LSP %s %s:%d:%d", in.Operation, in.FilePath, int(in.Line), int(in.Character))
		}),
	))
}

func absPath(env *tool.Env, p string) (string, error) {
	if p == "" {
		return "", errors.New("filePath is empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("filePath contains a NUL byte")
	}
	if !filepath.IsAbs(p) {
		wd := ""
		if env != nil {
			wd = env.WorkDir
		}
		if wd == "" {
			return "", fmt.Errorf("filePath %q is relative and the session has no working directory", p)
		}
		p = filepath.Join(wd, p)
	}
	return filepath.Clean(p), nil
}

func call(ctx context.Context, env *tool.Env, in Input) (*tool.Result, error) {
	m, err := tool.Use[*Manager](env)
	if err != nil {
		return nil, fmt.Errorf("the LSP tool needs the session's language-server manager: %w", err)
	}
	path, err := absPath(env, in.FilePath)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("lsp: %w", err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("lsp: %s is a directory; give a source file", path)
	}
	text, err := m.Query(ctx, env, in.Operation, path, int(in.Line), int(in.Character))
	if err != nil {
		return nil, err
	}
	return tool.TextResult(text), nil
}
