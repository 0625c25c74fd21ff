package lsp

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"

	"github.com/gantry-dev/gantry/internal/textutil"

	"github.com/gantry-dev/gantry/tool"
)

// Operations of the LSP tool.
const (
	OpDefinition      = "goToDefinition"
	OpReferences      = "findReferences"
	OpHover           = "hover"
	OpDocumentSymbol  = "documentSymbol"
	OpWorkspaceSymbol = "workspaceSymbol"
	OpImplementation  = "goToImplementation"
	OpPrepareCalls    = "prepareCallHierarchy"
	OpIncomingCalls   = "incomingCalls"
	OpOutgoingCalls   = "outgoingCalls"
)

// maxResults bounds the locations listed in one result.
const maxResults = 200

// Query runs one LSP operation at path:line:character (1-based; character
// counts Unicode code points) and returns the text the tool shows.
func (m *Manager) Query(ctx context.Context, env *tool.Env, op, path string, line, character int) (string, error) {
	f := newFormatter(m, env)
	pos := position{}
	if op != OpDocumentSymbol {
		p, err := f.toLSP(path, line, character)
		if err != nil {
			return "", err
		}
		pos = p
	}
	at := func(uri string) any {
		return positionParams{TextDocument: textDocumentID{URI: uri}, Position: pos}
	}
	here := fmt.Sprintf("%s:%d:%d", f.rel(path), line, character)
	switch op {
	case OpDefinition, OpImplementation:
		method := "textDocument/definition"
		what := "definition"
		if op == OpImplementation {
			method, what = "textDocument/implementation", "implementation"
		}
		var raw rawLocations
		if _, err := m.call(ctx, env, path, method, at, &raw); err != nil {
			return "", err
		}
		locs := raw.locations()
		if len(locs) == 0 {
			return fmt.Sprintf("No %s found at %s.", what, here), nil
		}
		return f.locations(fmt.Sprintf("%s of the symbol at %s", plural(len(locs), what), here), locs), nil
	case OpReferences:
		var locs []location
		params := func(uri string) any {
			p := referenceParams{positionParams: positionParams{TextDocument: textDocumentID{URI: uri}, Position: pos}}
			p.Context.IncludeDeclaration = true
			return p
		}
		if _, err := m.call(ctx, env, path, "textDocument/references", params, &locs); err != nil {
			return "", err
		}
		if len(locs) == 0 {
			return fmt.Sprintf("No references found at %s.", here), nil
		}
		return f.locations(fmt.Sprintf("%s to the symbol at %s", plural(len(locs), "reference"), here), locs), nil
	case OpHover:
		var h *hoverResult
		if _, err := m.call(ctx, env, path, "textDocument/hover", at, &h); err != nil {
			return "", err
		}
		if h == nil || strings.TrimSpace(hoverText(h.Contents)) == "" {
			return fmt.Sprintf("No hover information at %s.", here), nil
		}
		return fmt.Sprintf("Hover at %s:\n%s", here, strings.TrimSpace(hoverText(h.Contents))), nil
	case OpDocumentSymbol:
		var raw rawSymbols
		params := func(uri string) any { return map[string]any{"textDocument": textDocumentID{URI: uri}} }
		if _, err := m.call(ctx, env, path, "textDocument/documentSymbol", params, &raw); err != nil {
			return "", err
		}
		return f.documentSymbols(path, raw), nil
	case OpWorkspaceSymbol:
		query := f.wordAt(path, line, character)
		if query == "" {
			return "", fmt.Errorf("lsp: no identifier at %s to search the workspace for", here)
		}
		var syms []symbolInformation
		params := func(string) any { return map[string]string{"query": query} }
		if _, err := m.call(ctx, env, path, "workspace/symbol", params, &syms); err != nil {
			return "", err
		}
		if len(syms) == 0 {
			return fmt.Sprintf("No workspace symbols match %q.", query), nil
		}
		return f.symbolList(fmt.Sprintf("%s matching %q", plural(len(syms), "workspace symbol"), query), syms), nil
	case OpPrepareCalls, OpIncomingCalls, OpOutgoingCalls:
		var items []callHierarchyItem
		if _, err := m.call(ctx, env, path, "textDocument/prepareCallHierarchy", at, &items); err != nil {
			return "", err
		}
		if len(items) == 0 {
			return fmt.Sprintf("No call hierarchy item (function or method) at %s.", here), nil
		}
		if op == OpPrepareCalls {
			return f.items(fmt.Sprintf("%s at %s", plural(len(items), "call hierarchy item"), here), items), nil
		}
		return m.calls(ctx, env, f, path, op, here, items)
	}
	return "", fmt.Errorf("lsp: unknown operation %q", op)
}

func (m *Manager) calls(ctx context.Context, env *tool.Env, f *formatter, path, op, here string, items []callHierarchyItem) (string, error) {
	var b strings.Builder
	for _, it := range items {
		params := func(string) any { return map[string]any{"item": it} }
		if op == OpIncomingCalls {
			var calls []callHierarchyIncomingCall
			if _, err := m.call(ctx, env, path, "callHierarchy/incomingCalls", params, &calls); err != nil {
				return "", err
			}
			if len(calls) == 0 {
				fmt.Fprintf(&b, "No calls to %s found.\n", it.Name)
				continue
			}
			var locs []location
			names := map[location]string{}
			for _, c := range calls {
				for _, r := range c.FromRanges {
					l := location{URI: c.From.URI, Range: r}
					locs = append(locs, l)
					names[l] = c.From.Name
				}
			}
			fmt.Fprintf(&b, "%s to %s (%s):\n", plural(len(locs), "call"), it.Name, here)
			f.writeLocations(&b, locs, func(l location) string { return "in " + names[l] + ": " })
		} else {
			var calls []callHierarchyOutgoingCall
			if _, err := m.call(ctx, env, path, "callHierarchy/outgoingCalls", params, &calls); err != nil {
				return "", err
			}
			if len(calls) == 0 {
				fmt.Fprintf(&b, "%s calls no functions.\n", it.Name)
				continue
			}
			var targets []callHierarchyItem
			for _, c := range calls {
				targets = append(targets, c.To)
			}
			b.WriteString(f.items(fmt.Sprintf("%s called by %s (%s)", plural(len(targets), "function"), it.Name, here), targets))
			b.WriteByte('\n')
		}
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// formatter renders locations relative to the project, with snippets; it
// caches file lines for one call.
type formatter struct {
	root  string
	lines map[string][]string
}

func newFormatter(m *Manager, env *tool.Env) *formatter {
	root := ""
	if env != nil {
		root = env.WorkDir
	}
	m.mu.Lock()
	if m.root != "" {
		root = m.root
	}
	m.mu.Unlock()
	return &formatter{root: root, lines: map[string][]string{}}
}

func (f *formatter) rel(path string) string {
	if f.root != "" && within(f.root, path) {
		if r, err := filepath.Rel(f.root, path); err == nil {
			return filepath.ToSlash(r)
		}
	}
	return path
}

func (f *formatter) fileLines(path string) []string {
	if l, ok := f.lines[path]; ok {
		return l
	}
	var lines []string
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() <= maxDocBytes {
		if b, err := os.ReadFile(path); err == nil {
			lines = strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
		}
	}
	f.lines[path] = lines
	return lines
}

// toLSP converts a 1-based line and code-point column to an LSP position.
func (f *formatter) toLSP(path string, line, char int) (position, error) {
	lines := f.fileLines(path)
	if line < 1 || line > len(lines) {
		return position{}, fmt.Errorf("lsp: line %d is outside %s (%d lines)", line, f.rel(path), len(lines))
	}
	text := lines[line-1]
	runes := []rune(text)
	if char < 1 {
		char = 1
	}
	if char > len(runes)+1 {
		char = len(runes) + 1
	}
	return position{Line: line - 1, Character: len(utf16.Encode(runes[:char-1]))}, nil
}

// fromLSP converts an LSP position to a 1-based line and code-point column.
func (f *formatter) fromLSP(path string, p position) (int, int) {
	lines := f.fileLines(path)
	if p.Line < 0 || p.Line >= len(lines) {
		return p.Line + 1, p.Character + 1
	}
	units := 0
	col := 1
	for _, r := range lines[p.Line] {
		if units >= p.Character {
			break
		}
		units += utf16.RuneLen(r)
		col++
	}
	return p.Line + 1, col
}

func (f *formatter) snippet(path string, line int) string {
	lines := f.fileLines(path)
	if line < 1 || line > len(lines) {
		return ""
	}
	s := strings.TrimSpace(lines[line-1])
	return textutil.Truncate(s, 160)
}

// wordAt returns the identifier under line:char (1-based).
func (f *formatter) wordAt(path string, line, char int) string {
	lines := f.fileLines(path)
	if line < 1 || line > len(lines) {
		return ""
	}
	runes := []rune(lines[line-1])
	i := min(max(char-1, 0), len(runes))
	isWord := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	if i == len(runes) || !isWord(runes[i]) {
		if i > 0 && isWord(runes[i-1]) {
			i--
		} else {
			return ""
		}
	}
	start, end := i, i
	for start > 0 && isWord(runes[start-1]) {
		start--
	}
	for end < len(runes) && isWord(runes[end]) {
		end++
	}
	return string(runes[start:end])
}

type locLine struct {
	path      string
	line, col int
	prefix    string
}

func (f *formatter) locations(title string, locs []location) string {
	var b strings.Builder
	b.WriteString(title + ":\n")
	f.writeLocations(&b, locs, nil)
	return strings.TrimRight(b.String(), "\n")
}

func (f *formatter) writeLocations(b *strings.Builder, locs []location, prefix func(location) string) {
	var out []locLine
	seen := map[string]bool{}
	for _, l := range locs {
		p, err := uriToPath(l.URI)
		if err != nil {
			continue
		}
		line, col := f.fromLSP(p, l.Range.Start)
		key := fmt.Sprintf("%s:%d:%d", p, line, col)
		if seen[key] {
			continue
		}
		seen[key] = true
		ll := locLine{path: p, line: line, col: col}
		if prefix != nil {
			ll.prefix = prefix(l)
		}
		out = append(out, ll)
	}
	slices.SortFunc(out, func(a, b locLine) int {
		return cmp.Or(cmp.Compare(f.rel(a.path), f.rel(b.path)), cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col))
	})
	for i, l := range out {
		if i == maxResults {
			fmt.Fprintf(b, "… %d more not shown\n", len(out)-maxResults)
			break
		}
		fmt.Fprintf(b, "%s:%d:%d: %s%s\n", f.rel(l.path), l.line, l.col, l.prefix, f.snippet(l.path, l.line))
	}
}

func (f *formatter) items(title string, items []callHierarchyItem) string {
	var b strings.Builder
	b.WriteString(title + ":\n")
	for i, it := range items {
		if i == maxResults {
			fmt.Fprintf(&b, "… %d more not shown\n", len(items)-maxResults)
			break
		}
		p, err := uriToPath(it.URI)
		if err != nil {
			continue
		}
		line, col := f.fromLSP(p, it.SelectionRange.Start)
		detail := ""
		if it.Detail != "" {
			detail = " — " + it.Detail
		}
		fmt.Fprintf(&b, "%s:%d:%d: %s %s%s\n", f.rel(p), line, col, kindName(it.Kind), it.Name, detail)
	}
	return strings.TrimRight(b.String(), "\n")
}

func (f *formatter) symbolList(title string, syms []symbolInformation) string {
	slices.SortStableFunc(syms, func(a, b symbolInformation) int {
		return cmp.Or(cmp.Compare(a.Location.URI, b.Location.URI), cmp.Compare(a.Location.Range.Start.Line, b.Location.Range.Start.Line))
	})
	var b strings.Builder
	b.WriteString(title + ":\n")
	for i, s := range syms {
		if i == maxResults {
			fmt.Fprintf(&b, "… %d more not shown\n", len(syms)-maxResults)
			break
		}
		p, err := uriToPath(s.Location.URI)
		if err != nil {
			continue
		}
		line, col := f.fromLSP(p, s.Location.Range.Start)
		in := ""
		if s.ContainerName != "" {
			in = " in " + s.ContainerName
		}
		fmt.Fprintf(&b, "%s:%d:%d: %s %s%s\n", f.rel(p), line, col, kindName(s.Kind), s.Name, in)
	}
	return strings.TrimRight(b.String(), "\n")
}

func (f *formatter) documentSymbols(path string, raw rawSymbols) string {
	if len(raw.tree) == 0 && len(raw.flat) == 0 {
		return fmt.Sprintf("No symbols in %s.", f.rel(path))
	}
	if len(raw.flat) > 0 {
		return f.symbolList(fmt.Sprintf("%s in %s", plural(len(raw.flat), "symbol"), f.rel(path)), raw.flat)
	}
	var b strings.Builder
	n := 0
	var walk func(list []documentSymbol, depth int)
	walk = func(list []documentSymbol, depth int) {
		for _, s := range list {
			n++
			if n > maxResults*2 {
				return
			}
			line, col := f.fromLSP(path, s.SelectionRange.Start)
			detail := ""
			if s.Detail != "" {
				detail = " " + s.Detail
			}
			fmt.Fprintf(&b, "%s%d:%d: %s %s%s\n", strings.Repeat("  ", depth), line, col, kindName(s.Kind), s.Name, detail)
			walk(s.Children, depth+1)
		}
	}
	walk(raw.tree, 0)
	if n > maxResults*2 {
		fmt.Fprintf(&b, "… more symbols not shown\n")
	}
	return fmt.Sprintf("Symbols in %s (line:col):\n%s", f.rel(path), strings.TrimRight(b.String(), "\n"))
}
