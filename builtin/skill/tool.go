package skill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/internal/home"

	"github.com/gantry-dev/gantry/internal/textutil"

	"github.com/gantry-dev/gantry/tool"
)

// DefaultMaxDepth is the default of [Options.MaxDepth].
const DefaultMaxDepth = 4

// Options configure the Skill tool. The zero value finds the user's and the
// project's skills.
type Options struct {
	// Skills are skills given in code; they replace user skills of the same
	// name and are replaced by project skills.
	Skills []Skill
	// Dirs are extra folders holding skill folders (like .gantry/skills),
	// with the precedence of Skills.
	Dirs []string
	// NoUser and NoProject leave out the user's and the project's skill
	// folders.
	NoUser, NoProject bool
	// UserHome is the user's home (default $HOME); GantryHome is Gantry's
	// (default $GANTRY_HOME, else UserHome/.gantry).
	UserHome, GantryHome string
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
	// MaxDepth bounds the skills activated in one turn (a skill calling a
	// skill counts one more). Zero means [DefaultMaxDepth].
	MaxDepth int
}

func (o Options) withDefaults() Options {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.UserHome == "" {
		o.UserHome = o.Getenv("HOME")
	}
	if o.GantryHome == "" {
		o.GantryHome = home.Dir(o.Getenv, o.UserHome)
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	return o
}

// Discover returns the skills visible from project, sorted by name, and
// the problems of skill files that could not be used.
func Discover(opts Options, project string) ([]*Skill, []error) {
	opts = opts.withDefaults()
	byName := map[string]*Skill{}
	var problems []error
	add := func(list []*Skill, errs []error) {
		problems = append(problems, errs...)
		for _, s := range list {
			byName[s.Name] = s
		}
	}
	if !opts.NoUser {
		if opts.UserHome != "" {
			add(Load(filepath.Join(opts.UserHome, ".claude", "skills"), "user"))
		}
		if opts.GantryHome != "" {
			add(Load(filepath.Join(opts.GantryHome, "skills"), "user"))
		}
	}
	for _, s := range opts.Skills {
		s := s
		if !validName(s.Name) || s.Description == "" {
			problems = append(problems, fmt.Errorf("skill %q: needs a valid name and a description", s.Name))
			continue
		}
		if s.Source == "" {
			s.Source = "sdk"
		}
		byName[s.Name] = &s
	}
	for _, d := range opts.Dirs {
		add(Load(d, "sdk"))
	}
	if !opts.NoProject && project != "" {
		add(Load(filepath.Join(project, ".claude", "skills"), "project"))
		add(Load(filepath.Join(project, ".gantry", "skills"), "project"))
	}
	var out []*Skill
	for _, s := range byName {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Skill) int { return strings.Compare(a.Name, b.Name) })
	return out, problems
}

// Restrictor narrows the tools of a session until the returned pop is
// called; *toolset.Pool implements it.
type Restrictor interface {
	Push(patterns ...string) (pop func())
}

// Turn is the per-session state of the skills activated in the current
// turn: their restriction layers and the nesting depth. The session's
// assembly provides one (tool.Provide) and calls [Turn.End] when a turn
// ends (package workspace does, at every new user prompt). It is safe for
// concurrent use.
type Turn struct {
	restrict Restrictor
	mu       sync.Mutex
	active   []string
	pops     []func()
}

// NewTurn returns the turn state over r (nil r: skills with allowed-tools
// cannot be activated).
func NewTurn(r Restrictor) *Turn { return &Turn{restrict: r} }

// Active returns the names of the skills activated in this turn, in order.
func (t *Turn) Active() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.active)
}

// activate records s, pushing its allowed-tools as a restriction layer;
// it fails past maxDepth.
func (t *Turn) activate(s *Skill, maxDepth int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.active) >= maxDepth {
		return fmt.Errorf("skill %q not loaded: %d skills are already active in this turn (%s), the nesting limit", s.Name, len(t.active), strings.Join(t.active, " → "))
	}
	if len(s.AllowedTools) > 0 {
		if t.restrict == nil {
			return fmt.Errorf("skill %q restricts the tools (allowed-tools) but this session cannot apply that restriction", s.Name)
		}
		t.pops = append(t.pops, t.restrict.Push(append(slices.Clone(s.AllowedTools), "Skill")...))
	}
	t.active = append(t.active, s.Name)
	return nil
}

// End ends the turn: every restriction the turn's skills pushed is popped
// and the nesting depth is reset.
func (t *Turn) End() {
	t.mu.Lock()
	pops := t.pops
	t.pops, t.active = nil, nil
	t.mu.Unlock()
	for i := len(pops) - 1; i >= 0; i-- {
		pops[i]()
	}
}

// Input is the input of the Skill tool.
type Input struct {
	Skill string `json:"skill" jsonschema:"The skill name, as listed (e.g. \"pdf\" or \"review-pr\")"`
	Args  string `json:"args,omitempty" jsonschema:"Optional arguments for the skill"`
}

// New returns the Skill tool over a fixed list of skills (see [Discover]).
// Without skills the tool is disabled. It needs a *[Turn] in the call's
// services.
func New(skills []*Skill, opts Options) tool.Tool {
	opts = opts.withDefaults()
	byName := map[string]*Skill{}
	for _, s := range skills {
		byName[s.Name] = s
	}
	return tool.Must(tool.New("Skill", description(skills),
		func(ctx context.Context, env *tool.Env, in Input) (*tool.Result, error) {
			s, ok := byName[strings.TrimPrefix(strings.TrimSpace(in.Skill), "/")]
			if !ok {
				names := slices.Sorted(func(yield func(string) bool) {
					for n := range byName {
						if !yield(n) {
							return
						}
					}
				})
				return nil, fmt.Errorf("unknown skill %q; available: %s", in.Skill, strings.Join(names, ", "))
			}
			turn, err := tool.Use[*Turn](env)
			if err != nil {
				return nil, fmt.Errorf("the Skill tool needs the session's skill state: %w", err)
			}
			if err := turn.activate(s, opts.MaxDepth); err != nil {
				return nil, err
			}
			return result(env, s, in.Args), nil
		},
		// It changes nothing outside the session: read-only; not
		// concurrency-safe, so that its change of the session's readable
		// folders (a context modifier) is applied in order.
		tool.WithTraits(tool.Traits{ReadOnly: true, NonDestructive: true}),
		tool.EnabledFunc(func(context.Context, *tool.Env) bool { return len(skills) > 0 }),
		tool.DescribeFunc(func(in Input) string { return "Skill " + in.Skill }),
	))
}

func description(skills []*Skill) string {
	var b strings.Builder
	b.WriteString(`Loads a skill: specialised instructions (and the files of its folder) for a kind of task. When a request matches a skill's description, call this tool with the skill's name before doing the task; the instructions are then added to the conversation. Do not call a skill that is already loaded in this turn.

Available skills:`)
	for _, s := range skills {
		fmt.Fprintf(&b, "\n- %s: %s", s.Name, oneLine(s.Description))
	}
	return b.String()
}

func oneLine(s string) string {
	return textutil.OneLine(s, 250)
}

// result is the tool result of an activated skill: a short confirmation,
// the instructions as an extra user message, and the skill's folder added
// to the session's readable directories.
func result(env *tool.Env, s *Skill, args string) *tool.Result {
	body := s.Body
	if strings.Contains(body, "$ARGUMENTS") {
		body = strings.ReplaceAll(body, "$ARGUMENTS", args)
	} else if strings.TrimSpace(args) != "" {
		body += "\n\nARGUMENTS: " + args
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "<skill name=%q>\n", s.Name)
	if s.Dir != "" {
		fmt.Fprintf(&msg, "Base directory of this skill (its files are readable): %s\n\n", s.Dir)
	}
	msg.WriteString(body)
	msg.WriteString("\n</skill>")
	text := fmt.Sprintf("Skill %q loaded; its instructions follow.", s.Name)
	if len(s.AllowedTools) > 0 {
		text += fmt.Sprintf(" For the rest of this turn the tools are limited to: %s (and Skill).", strings.Join(s.AllowedTools, ", "))
	}
	if s.Model != "" {
		text += fmt.Sprintf(" (The skill asks for model %q; this session keeps its model.)", s.Model)
	}
	r := &tool.Result{
		Content:    []tool.Content{tool.Text(text)},
		Messages:   []tool.Message{{Role: "user", Content: []tool.Content{tool.Text(msg.String())}}},
		Structured: map[string]any{"skill": s.Name, "allowed_tools": s.AllowedTools, "model": s.Model, "dir": s.Dir},
	}
	if dir := s.Dir; dir != "" && !inside(env, dir) {
		r.ContextModifier = func(e *tool.Env) {
			if !slices.Contains(e.AdditionalDirs, dir) {
				e.AdditionalDirs = append(e.AdditionalDirs, dir)
			}
		}
	}
	return r
}

// inside reports whether dir is already within the session's directories.
func inside(env *tool.Env, dir string) bool {
	if env == nil {
		return false
	}
	for _, d := range append([]string{env.WorkDir}, env.AdditionalDirs...) {
		if d == "" {
			continue
		}
		rel, err := filepath.Rel(d, dir)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// Factory returns a toolset factory building the Skill tool for a session:
// the skills visible from the session's working directory.
func Factory(opts Options) func(ctx context.Context, env *tool.Env) (tool.Tool, error) {
	// A session without skills gets the disabled tool, which depends on
	// opts alone: built once and shared by every session of the registry
	// (most sessions of a server have no skills, and a tool per session
	// added to every one).
	none := sync.OnceValue(func() tool.Tool { return New(nil, opts) })
	return func(_ context.Context, env *tool.Env) (tool.Tool, error) {
		if env == nil {
			return nil, errors.New("skill: no environment")
		}
		skills, _ := Discover(opts, env.WorkDir)
		if len(skills) == 0 {
			return none(), nil
		}
		return New(skills, opts), nil
	}
}
