// Package memory holds the opt-in `memory` tool: a directory of files the
// model keeps across sessions (notes on the project, decisions, progress),
// with the commands of Anthropic's memory tool — view, create, str_replace,
// insert, delete, rename — over paths under /memories.
//
// The directory is $GANTRY_HOME/memory/<project> (the project's absolute
// path with every character other than a letter or digit replaced by '-').
// Every access goes through an [os.Root] opened on it, so no path — "..",
// an absolute path, a symlink planted inside — reaches outside; paths are
// also checked up front for a clear error. Files and the directory are
// size-capped; writes are atomic.
package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gantry-dev/gantry/internal/home"

	"github.com/gantry-dev/gantry/tool"
)

// Defaults of [Options].
const (
	DefaultMaxFileBytes  = 100 << 10
	DefaultMaxTotalBytes = 10 << 20
	DefaultMaxFiles      = 1000
)

// Prefix is the virtual root every path of the tool starts with.
const Prefix = "/memories"

// Options configure the memory tool. The zero value keeps memory under
// $GANTRY_HOME/memory/<project of the working directory> with the default
// caps.
type Options struct {
	// Dir is the memory directory. Empty means
	// <GantryHome>/memory/<project key of the session's working directory>.
	Dir string
	// GantryHome is Gantry's home (default: $GANTRY_HOME, else
	// $HOME/.gantry, as settings.GantryHome finds it).
	GantryHome string
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
	// MaxFileBytes caps one file (default 100 KiB); MaxTotalBytes caps the
	// directory (default 10 MiB); MaxFiles caps the number of files
	// (default 1000).
	MaxFileBytes, MaxTotalBytes int64
	MaxFiles                    int
}

func (o Options) withDefaults() Options {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.GantryHome == "" {
		o.GantryHome = home.Dir(o.Getenv, "")
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	return o
}

var unsafeChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9]`) }) // compiled on first use, not at init

// ProjectKey is the folder name of a project's memory.
func ProjectKey(project string) string {
	return unsafeChars().ReplaceAllString(filepath.Clean(project), "-")
}

// Input is the input of the memory tool (one shape for every command, as
// in Anthropic's memory tool).
type Input struct {
	Command    string `json:"command" enum:"view,create,str_replace,insert,delete,rename" jsonschema:"The operation"`
	Path       string `json:"path,omitempty" jsonschema:"The file or directory, under /memories (view, create, str_replace, insert, delete)"`
	ViewRange  []int  `json:"view_range,omitempty" jsonschema:"view: optional [first, last] line range (1-based; last -1 = to the end)"`
	FileText   string `json:"file_text,omitempty" jsonschema:"create: the file's content"`
	OldStr     string `json:"old_str,omitempty" jsonschema:"str_replace: the exact text to replace (must occur once)"`
	NewStr     string `json:"new_str,omitempty" jsonschema:"str_replace: the replacement"`
	InsertLine *int   `json:"insert_line,omitempty" jsonschema:"insert: the line after which to insert (0 = at the top)"`
	InsertText string `json:"insert_text,omitempty" jsonschema:"insert: the text to insert"`
	OldPath    string `json:"old_path,omitempty" jsonschema:"rename: the current path"`
	NewPath    string `json:"new_path,omitempty" jsonschema:"rename: the new path"`
}

const description = `Your persistent memory for this project: a directory of files kept across sessions, under /memories.

Check it at the start of a task (view /memories) for earlier progress and notes; record what a later session should know (decisions, progress, how things are done here) as you go. Keep files small and organised; update or delete what is outdated.

Commands: view (a directory listing, or a file with line numbers; view_range [first,last]), create (path, file_text; replaces an existing file), str_replace (path, old_str occurring once, new_str), insert (path, insert_line, insert_text), delete (path: a file or a directory), rename (old_path, new_path).

Only paths under /memories exist; files are text, at most 100 KiB each.`

// New returns the memory tool. It is not read-only (it writes), not
// concurrency-safe, not destructive in the sense of the working tree (it
// touches only its own directory).
func New(opts Options) tool.Tool {
	opts = opts.withDefaults()
	return tool.Must(tool.New("memory", description,
		func(ctx context.Context, env *tool.Env, in Input) (*tool.Result, error) {
			dir, err := directory(opts, env)
			if err != nil {
				return nil, err
			}
			out, err := run(dir, opts, in)
			if err != nil {
				return nil, err
			}
			return tool.TextResult(out), nil
		},
		tool.TraitsFunc(func(in Input) tool.Traits {
			if in.Command == "view" {
				return tool.ReadOnlyTraits
			}
			return tool.Traits{NonDestructive: in.Command != "delete"}
		}),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in Input) error {
			switch in.Command {
			case "rename":
				if _, err := clean(in.OldPath); err != nil {
					return fmt.Errorf("old_path: %w", err)
				}
				if _, err := clean(in.NewPath); err != nil {
					return fmt.Errorf("new_path: %w", err)
				}
			case "view", "create", "str_replace", "insert", "delete":
				if _, err := clean(in.Path); err != nil {
					return fmt.Errorf("path: %w", err)
				}
			default:
				return fmt.Errorf("unknown command %q (want view, create, str_replace, insert, delete or rename)", in.Command)
			}
			return nil
		}),
		tool.DescribeFunc(func(in Input) string {
			if in.Command == "rename" {
				return fmt.Sprintf("memory rename %s → %s", in.OldPath, in.NewPath)
			}
			return "memory " + in.Command + " " + in.Path
		}),
	))
}

// directory returns (and creates, 0700) the memory directory of a call.
func directory(opts Options, env *tool.Env) (string, error) {
	dir := opts.Dir
	if dir == "" {
		if opts.GantryHome == "" {
			return "", errors.New("memory: no Gantry home ($GANTRY_HOME or $HOME) to keep memory in")
		}
		if env == nil || env.WorkDir == "" {
			return "", errors.New("memory: the session has no working directory to name its project")
		}
		dir = filepath.Join(opts.GantryHome, "memory", ProjectKey(env.WorkDir))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}
	return dir, nil
}

// clean turns a /memories path into a slash-separated path relative to the
// memory directory ("." for the root). It refuses anything not under
// /memories, "..", NUL, backslashes and control characters.
func clean(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path; paths start with /memories")
	}
	if !utf8.ValidString(p) || strings.ContainsAny(p, "\x00\\") || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", fmt.Errorf("%q: invalid characters", p)
	}
	if p != Prefix && !strings.HasPrefix(p, Prefix+"/") {
		return "", fmt.Errorf("%q is outside memory: paths start with %s/", p, Prefix)
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(p, Prefix), "/")
	for _, part := range strings.Split(rel, "/") {
		if part == ".." {
			return "", fmt.Errorf("%q: '..' is not allowed", p)
		}
	}
	rel = path.Clean("/" + rel)[1:]
	if rel == "" {
		return ".", nil
	}
	if len(rel) > 512 {
		return "", fmt.Errorf("%q: path too long", p)
	}
	return rel, nil
}

func display(rel string) string {
	if rel == "." {
		return Prefix
	}
	return Prefix + "/" + rel
}

// run executes one command inside dir.
func run(dir string, opts Options, in Input) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}
	defer root.Close()
	m := &store{root: root, opts: opts}
	switch in.Command {
	case "view":
		rel, err := clean(in.Path)
		if err != nil {
			return "", err
		}
		return m.view(rel, in.ViewRange)
	case "create":
		rel, err := clean(in.Path)
		if err != nil {
			return "", err
		}
		if rel == "." {
			return "", errors.New("create needs a file path under /memories/")
		}
		if err := m.write(rel, in.FileText, true); err != nil {
			return "", err
		}
		return fmt.Sprintf("File created successfully at: %s", display(rel)), nil
	case "str_replace":
		rel, text, err := m.load(in.Path)
		if err != nil {
			return "", err
		}
		if in.OldStr == "" {
			return "", errors.New("old_str is empty")
		}
		switch n := strings.Count(text, in.OldStr); n {
		case 0:
			return "", fmt.Errorf("old_str does not occur in %s; nothing changed", display(rel))
		case 1:
		default:
			return "", fmt.Errorf("old_str occurs %d times in %s; give more context so it occurs once", n, display(rel))
		}
		if err := m.write(rel, strings.Replace(text, in.OldStr, in.NewStr, 1), false); err != nil {
			return "", err
		}
		return fmt.Sprintf("The memory file %s has been edited.", display(rel)), nil
	case "insert":
		rel, text, err := m.load(in.Path)
		if err != nil {
			return "", err
		}
		if in.InsertLine == nil {
			return "", errors.New("insert needs insert_line")
		}
		lines := strings.SplitAfter(text, "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		at := *in.InsertLine
		if at < 0 || at > len(lines) {
			return "", fmt.Errorf("insert_line %d is outside [0, %d]", at, len(lines))
		}
		ins := in.InsertText
		if !strings.HasSuffix(ins, "\n") {
			ins += "\n"
		}
		if at > 0 && !strings.HasSuffix(lines[at-1], "\n") {
			lines[at-1] += "\n"
		}
		out := strings.Join(lines[:at], "") + ins + strings.Join(lines[at:], "")
		if err := m.write(rel, out, false); err != nil {
			return "", err
		}
		return fmt.Sprintf("Text inserted after line %d of %s.", at, display(rel)), nil
	case "delete":
		rel, err := clean(in.Path)
		if err != nil {
			return "", err
		}
		if rel == "." {
			return "", errors.New("the memory directory itself cannot be deleted; delete its files")
		}
		if _, err := root.Lstat(rel); err != nil {
			return "", notExist(rel, err)
		}
		if err := root.RemoveAll(rel); err != nil {
			return "", fmt.Errorf("memory: delete %s: %w", display(rel), err)
		}
		return fmt.Sprintf("Deleted %s.", display(rel)), nil
	case "rename":
		from, err := clean(in.OldPath)
		if err != nil {
			return "", err
		}
		to, err := clean(in.NewPath)
		if err != nil {
			return "", err
		}
		if from == "." || to == "." {
			return "", errors.New("the memory directory itself cannot be renamed")
		}
		if _, err := root.Lstat(from); err != nil {
			return "", notExist(from, err)
		}
		if _, err := root.Lstat(to); err == nil {
			return "", fmt.Errorf("%s already exists; delete it first or choose another name", display(to))
		}
		if d := path.Dir(to); d != "." {
			if err := root.MkdirAll(d, 0o700); err != nil {
				return "", fmt.Errorf("memory: %w", err)
			}
		}
		if err := root.Rename(from, to); err != nil {
			return "", fmt.Errorf("memory: rename: %w", err)
		}
		return fmt.Sprintf("Renamed %s to %s.", display(from), display(to)), nil
	}
	return "", fmt.Errorf("unknown command %q", in.Command)
}

func notExist(rel string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s does not exist", display(rel))
	}
	return fmt.Errorf("memory: %s: %w", display(rel), err)
}

type store struct {
	root *os.Root
	opts Options
}

// load checks a path and reads its file.
func (m *store) load(p string) (rel, text string, err error) {
	if rel, err = clean(p); err != nil {
		return "", "", err
	}
	text, err = m.read(rel)
	return rel, text, err
}

func (m *store) read(rel string) (string, error) {
	fi, err := m.root.Lstat(rel)
	if err != nil {
		return "", notExist(rel, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a file", display(rel))
	}
	if fi.Size() > m.opts.MaxFileBytes {
		return "", fmt.Errorf("%s is over the %d-byte file limit", display(rel), m.opts.MaxFileBytes)
	}
	b, err := m.root.ReadFile(rel)
	if err != nil {
		return "", notExist(rel, err)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%s is not UTF-8 text", display(rel))
	}
	return string(b), nil
}

// write replaces (or, with create, creates) a file atomically within the
// caps.
func (m *store) write(rel, text string, create bool) error {
	if int64(len(text)) > m.opts.MaxFileBytes {
		return fmt.Errorf("the content is %d bytes, over the %d-byte file limit; keep memory files small", len(text), m.opts.MaxFileBytes)
	}
	if !utf8.ValidString(text) || strings.ContainsRune(text, 0) {
		return errors.New("memory files are UTF-8 text without NUL bytes")
	}
	old, exists := int64(0), false
	fi, err := m.root.Lstat(rel)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("%s exists and is not a file", display(rel))
	case err == nil:
		old, exists = fi.Size(), true
	case !errors.Is(err, fs.ErrNotExist):
		return notExist(rel, err)
	case !create:
		return notExist(rel, err)
	}
	files, total, err := m.usage()
	if err != nil {
		return err
	}
	if !exists && files >= m.opts.MaxFiles {
		return fmt.Errorf("memory holds %d files, the limit; delete or merge some first", files)
	}
	if total-old+int64(len(text)) > m.opts.MaxTotalBytes {
		return fmt.Errorf("memory would grow to %d bytes, over its %d-byte limit; delete or shorten files first", total-old+int64(len(text)), m.opts.MaxTotalBytes)
	}
	if d := path.Dir(rel); d != "." {
		if err := m.root.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("memory: %w", err)
		}
	}
	tmp := path.Join(path.Dir(rel), fmt.Sprintf(".%s.tmp%d", path.Base(rel), os.Getpid()))
	f, err := m.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	_, werr := f.WriteString(text)
	serr := f.Sync()
	cerr := f.Close()
	if err := cmp.Or(werr, serr, cerr); err != nil {
		_ = m.root.Remove(tmp)
		return fmt.Errorf("memory: write %s: %w", display(rel), err)
	}
	if err := m.root.Rename(tmp, rel); err != nil {
		_ = m.root.Remove(tmp)
		return fmt.Errorf("memory: write %s: %w", display(rel), err)
	}
	return nil
}

// usage counts the files and bytes of the memory directory.
func (m *store) usage() (files int, total int64, err error) {
	err = fs.WalkDir(m.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files++
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("memory: %w", err)
	}
	return files, total, nil
}

// view lists a directory (two levels, sizes) or shows a file with line
// numbers.
func (m *store) view(rel string, rng []int) (string, error) {
	fi, err := m.root.Lstat(rel)
	if err != nil {
		return "", notExist(rel, err)
	}
	if fi.IsDir() {
		var lines []string
		err := fs.WalkDir(m.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			depth := 0
			if p != rel {
				r := strings.TrimPrefix(p, strings.TrimSuffix(rel, ".")+"/")
				if rel == "." {
					r = p
				}
				depth = strings.Count(r, "/") + 1
			}
			if strings.HasPrefix(d.Name(), ".") && p != rel {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if depth > 2 {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			size := int64(0)
			if info, err := d.Info(); err == nil {
				size = info.Size()
			}
			name := display(p)
			if d.IsDir() {
				name += "/"
			}
			lines = append(lines, fmt.Sprintf("%s\t%s", humanSize(size), name))
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("memory: %w", err)
		}
		slices.Sort(lines[1:])
		return fmt.Sprintf("The contents of %s (up to 2 levels deep, hidden files excluded):\n%s", display(rel), strings.Join(lines, "\n")), nil
	}
	text, err := m.read(rel)
	if err != nil {
		return "", err
	}
	all := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	first, last := 1, len(all)
	if len(rng) > 0 {
		if len(rng) != 2 {
			return "", errors.New("view_range is [first, last]")
		}
		first, last = rng[0], rng[1]
		if last == -1 {
			last = len(all)
		}
		if first < 1 || first > len(all) || last < first || last > len(all) {
			return "", fmt.Errorf("view_range [%d, %d] is outside the file's %d lines", rng[0], rng[1], len(all))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Here is the content of %s with line numbers:\n", display(rel))
	for i := first; i <= last; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i, all[i-1])
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d", n)
}
