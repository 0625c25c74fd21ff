package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/grep"

	"github.com/gantry-dev/gantry/tool"
)

// GrepInput is the input of the Grep tool. Its property names, types and
// enums are those of today's most used coding agent.
type GrepInput struct {
	Pattern      string   `json:"pattern" jsonschema:"The regular expression to search for in file contents (Go RE2 syntax, like ripgrep's default engine)"`
	Path         string   `json:"path,omitempty" jsonschema:"File or directory to search in. Defaults to the working directory"`
	Glob         string   `json:"glob,omitempty" jsonschema:"Glob pattern to filter files (ripgrep --glob), e.g. *.js or *.{ts,tsx}; a leading ! excludes; several globs separated by spaces"`
	OutputMode   string   `json:"output_mode,omitempty" enum:"content,files_with_matches,count" jsonschema:"content shows matching lines (supports -A/-B/-C context, -n, head_limit), files_with_matches shows file paths (default), count shows match counts per file"`
	Before       *float64 `json:"-B,omitempty" jsonschema:"Number of lines to show before each match (rg -B). Content mode only"`
	After        *float64 `json:"-A,omitempty" jsonschema:"Number of lines to show after each match (rg -A). Content mode only"`
	ContextShort *float64 `json:"-C,omitempty" jsonschema:"Number of lines to show before and after each match (rg -C). Content mode only"`
	Context      *float64 `json:"context,omitempty" jsonschema:"Same as -C"`
	LineNumbers  *bool    `json:"-n,omitempty" jsonschema:"Show line numbers (rg -n). Content mode only; defaults to true"`
	IgnoreCase   bool     `json:"-i,omitempty" jsonschema:"Case-insensitive search (rg -i)"`
	OnlyMatching bool     `json:"-o,omitempty" jsonschema:"Show only the matching part of each line (rg -o). Content mode only"`
	Type         string   `json:"type,omitempty" jsonschema:"File type to search (rg --type), e.g. go, js, py, rust, java. More efficient than glob for standard file types"`
	HeadLimit    *float64 `json:"head_limit,omitempty" jsonschema:"Limit output to the first N lines or entries (default 250; 0 means unlimited)"`
	Offset       *float64 `json:"offset,omitempty" jsonschema:"Skip the first N lines or entries before applying head_limit (default 0)"`
	Multiline    bool     `json:"multiline,omitempty" jsonschema:"Let patterns span lines; . matches newlines (rg -U --multiline-dotall). Default false"`
}

// Output modes (GrepInput.OutputMode).
const (
	ModeContent = grep.ModeContent
	ModeFiles   = grep.ModeFiles
	ModeCount   = grep.ModeCount
)

const grepDescription = `A powerful search tool built on ripgrep semantics.
- ALWAYS use Grep for search tasks. NEVER invoke grep or rg as a Bash command.
- Supports full regular expression syntax (e.g. "log.*Error", "func\s+\w+"); the dialect is Go's RE2. Literal braces need escaping (use interface\{\} to find interface{}).
- Filter files with glob (e.g. "*.js", "**/*.tsx") or type (e.g. "js", "py", "rust").
- Output modes: "content" shows matching lines, "files_with_matches" shows only file paths (default, newest first), "count" shows match counts.
- Patterns match within single lines by default; use multiline: true for patterns that span lines.
- .gitignore'd, hidden and binary files are skipped.`

// NewGrep returns the Grep tool.
func NewGrep(opts Options) (*tool.FuncTool, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	o := opts.WithDefaults()
	return tool.New("Grep", grepDescription,
		func(ctx context.Context, env *tool.Env, in GrepInput) (*tool.Result, error) {
			q, err := newQuery(env, o, in)
			if err != nil {
				return nil, err
			}
			res, err := grep.Search(ctx, q, o)
			if err != nil {
				return nil, err
			}
			if denied := tool.ReadFilterOf(env); denied != nil {
				// Read deny rules bind Grep too: no line, count or
				// name of their files is shown.
				res.Files = slices.DeleteFunc(res.Files, func(f grep.FileResult) bool { return denied(f.Path) })
			}
			text := res.Format()
			r := tool.TextResult(text)
			r.Structured = grepOutput(res, text)
			return r, nil
		},
		tool.ReadOnly(),
		tool.AccessFunc(func(in GrepInput) (tool.Access, error) { return tool.Access{Reads: []string{orDot(in.Path)}}, nil }),
		tool.ValidateFunc(func(_ context.Context, env *tool.Env, in GrepInput) error {
			_, err := newQuery(env, o, in)
			if err != nil && errors.Is(err, errPath) {
				return nil // reported by the call, with the path resolved
			}
			return err
		}),
		tool.DescribeFunc(func(in GrepInput) string {
			if in.Path != "" {
				return fmt.Sprintf("Grep %q in %s", in.Pattern, in.Path)
			}
			return fmt.Sprintf("Grep %q", in.Pattern)
		}),
		tool.WithDefer(tool.Deferral{SearchHint: "search file contents with a regular expression"}),
	)
}

var errPath = errors.New("path")

func count(name string, v *float64) (int, error) {
	if v == nil {
		return 0, nil
	}
	f := *v
	if f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, fmt.Errorf("%s must be a non-negative whole number, got %v", name, f)
	}
	return int(f), nil
}

func newQuery(env *tool.Env, o Options, in GrepInput) (*grep.Query, error) {
	if in.Pattern == "" {
		return nil, errors.New("pattern is empty")
	}
	q := &grep.Query{Pattern: in.Pattern, Mode: in.OutputMode, IgnoreCase: in.IgnoreCase, OnlyMatching: in.OnlyMatching, Multiline: in.Multiline, LineNumbers: true}
	switch q.Mode {
	case "":
		q.Mode = grep.ModeFiles
	case grep.ModeContent, grep.ModeFiles, grep.ModeCount:
	default:
		return nil, fmt.Errorf("output_mode must be content, files_with_matches or count, got %q", q.Mode)
	}
	var (
		errs        [6]error
		c, ctxAlias int
	)
	c, errs[0] = count("-C", in.ContextShort)
	ctxAlias, errs[1] = count("context", in.Context)
	q.Before, errs[2] = count("-B", in.Before)
	q.After, errs[3] = count("-A", in.After)
	q.HeadLimit, errs[4] = count("head_limit", in.HeadLimit)
	q.Offset, errs[5] = count("offset", in.Offset)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	if in.Context != nil {
		c = ctxAlias
	}
	if in.Before == nil {
		q.Before = c
	}
	if in.After == nil {
		q.After = c
	}
	if in.HeadLimit == nil {
		q.HeadLimit = o.HeadLimit
	}
	if in.LineNumbers != nil {
		q.LineNumbers = *in.LineNumbers
	}
	if q.Mode != grep.ModeContent {
		q.Before, q.After, q.OnlyMatching, q.LineNumbers = 0, 0, in.OnlyMatching && q.Mode == grep.ModeCount, false
	}
	q.Type = in.Type
	q.Globs = grep.SplitGlobs(in.Glob)
	if err := q.Compile(); err != nil {
		return nil, err
	}
	root, err := resolvePath(env, in.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errPath, err)
	}
	q.Root = root
	return q, nil
}

// GrepOutput is the structured result of a Grep call
// ([tool.Result.Structured]); its JSON is the Agent SDK's GrepOutput.
type GrepOutput struct {
	// Mode is the output mode (content, files_with_matches or count).
	Mode string `json:"mode"`
	// NumFiles is len(Filenames): the files with matches.
	NumFiles  int      `json:"numFiles"`
	Filenames []string `json:"filenames"`
	// Content is the text the model got (content and count modes);
	// NumLines its lines.
	Content  string `json:"content,omitempty"`
	NumLines *int   `json:"numLines,omitempty"`
	// NumMatches is the number of matches (count mode).
	NumMatches *int `json:"numMatches,omitempty"`
	// AppliedLimit and AppliedOffset are the paging that applied.
	AppliedLimit  *int `json:"appliedLimit,omitempty"`
	AppliedOffset *int `json:"appliedOffset,omitempty"`
}

func grepOutput(res *grep.Result, text string) GrepOutput {
	out := GrepOutput{Mode: res.Query.Mode, NumFiles: len(res.Files), Filenames: make([]string, 0, len(res.Files))}
	matches := 0
	for _, f := range res.Files {
		out.Filenames = append(out.Filenames, f.Path)
		matches += f.Matches
	}
	if res.Query.Mode != grep.ModeFiles {
		out.Content = text
		n := strings.Count(text, "\n")
		if text != "" && !strings.HasSuffix(text, "\n") {
			n++
		}
		out.NumLines = &n
	}
	if res.Query.Mode == grep.ModeCount {
		out.NumMatches = &matches
	}
	if res.Query.HeadLimit > 0 {
		out.AppliedLimit = &res.Query.HeadLimit
	}
	if res.Query.Offset > 0 {
		out.AppliedOffset = &res.Query.Offset
	}
	return out
}
