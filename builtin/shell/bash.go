package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gantry-dev/gantry/internal/textutil"

	"github.com/gantry-dev/gantry/internal/outbuf"
	"github.com/gantry-dev/gantry/internal/shellparse"
	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/tool"
)

// BashInput is the input of the Bash tool.
type BashInput struct {
	Command string `json:"command" jsonschema:"The command to run (bash syntax)."`
	// Timeout is in milliseconds.
	Timeout         *float64 `json:"timeout,omitempty" jsonschema:"Optional timeout in milliseconds (default 120000, max 600000)."`
	Description     string   `json:"description,omitempty" jsonschema:"A short description of what the command does, in 5-10 words."`
	RunInBackground bool     `json:"run_in_background,omitempty" jsonschema:"Run the command in the background and return a task id at once; read its output with TaskOutput and stop it with TaskStop."`
	// DangerouslyDisableSandbox asks to run the command outside the
	// session's sandbox. It is honoured only when the settings allow
	// unsandboxed commands (sandbox.allowUnsandboxedCommands), and the
	// permission layer asks first; otherwise the command runs sandboxed.
	DangerouslyDisableSandbox bool `json:"dangerouslyDisableSandbox,omitempty" jsonschema:"Set to true to run this command outside the sandbox (only when a sandboxed run failed because of the sandbox; the user is asked to approve)."`
}

// BashOutput is the structured result of a Bash call ([tool.Result.Structured]).
type BashOutput struct {
	// Output is the output as the model got it (stdout and stderr
	// interleaved, escapes stripped, possibly cut in the middle).
	Output string `json:"output"`
	// ExitCode is the shell's exit status (128+n when killed by signal n).
	ExitCode int `json:"exit_code"`
	// TimedOut, Interrupted and OutputLimited say why a command was stopped.
	TimedOut      bool `json:"timed_out,omitempty"`
	Interrupted   bool `json:"interrupted,omitempty"`
	OutputLimited bool `json:"output_limited,omitempty"`
	// Truncated reports that Output was cut; OutputFile then holds it all.
	Truncated  bool   `json:"truncated,omitempty"`
	OutputFile string `json:"output_file,omitempty"`
	// OutputBytes is the size of the whole output.
	OutputBytes int64 `json:"output_bytes"`
	// WorkDir is the working directory after the command, when it changed.
	WorkDir string `json:"work_dir,omitempty"`
	// TaskID is set for run_in_background.
	TaskID string `json:"task_id,omitempty"`
}

const bashDescription = `Runs a bash command in the session's working directory and returns its output (stdout and stderr interleaved) and exit status.

- The working directory persists between calls: a command that cd's moves the session there.
- Timeout: 120000 ms by default, at most 600000 ms. On timeout the whole process tree is terminated.
- Output beyond 30000 characters is cut in the middle; the full output is saved to a file whose path is given.
- Commands run without a terminal: stdin is empty, pagers and editors are disabled. Do not run interactive programs.
- Processes a command starts in the background with & are killed when it returns; use run_in_background for long-running commands (servers, watchers) and read their output with TaskOutput.
- Prefer the dedicated tools for reading, searching and editing files.`

// NewBash returns the Bash tool.
func NewBash(opts Options) tool.Tool {
	o := opts.withDefaults()
	b := &bash{opt: o}
	return tool.Must(tool.New("Bash", bashDescription, b.call,
		tool.WithTimeout(o.DefaultTimeout),
		tool.WithMaxTimeout(o.MaxTimeout),
		tool.CancelSiblingsOnError(),
		// Output is already bounded to InlineChars plus notes.
		tool.WithMaxResultChars(o.InlineChars+2_000),
		tool.TraitsFunc(bashTraits),
		tool.AccessFunc(func(in BashInput) (tool.Access, error) { return tool.Access{Command: in.Command}, nil }),
		tool.DescribeFunc(describeBash),
		tool.TimeoutFunc(b.timeout),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in BashInput) error {
			if strings.TrimSpace(in.Command) == "" {
				return errors.New("command is empty")
			}
			if in.Timeout != nil && *in.Timeout < 0 {
				return errors.New("timeout must not be negative")
			}
			return nil
		}),
		// Asked on every request: once the shell is found the answer is
		// kept (a shell removed later fails the call, which resolves it
		// again, with a clear error); not found is looked up again.
		tool.EnabledFunc(func(context.Context, *tool.Env) bool {
			if b.found.Load() {
				return true
			}
			_, err := o.shellPath()
			if err == nil {
				b.found.Store(true)
			}
			return err == nil
		}),
		tool.WithDefer(tool.Deferral{AlwaysLoad: true}),
	))
}

type bash struct {
	opt   Options
	found atomic.Bool // the shell was found by an enabled check
}

// bashTraits: read-only and non-destructive only for a foreground command
// the command-risk model ([shellparse.Analyze]) finds read-only; such a
// command is also concurrency-safe unless it may change the shell's
// directory (cd, pushd, popd anywhere in it): the executor applies the
// context modifier — the session's new working directory — only of calls
// that run alone, so "cd sub && ls" runs alone and moves the session like
// any other cd instead of running in a parallel batch and losing its cd.
func bashTraits(in BashInput) tool.Traits {
	if in.RunInBackground {
		return tool.Traits{}
	}
	a := shellparse.Analyze(in.Command)
	if ok, _ := a.ReadOnly(); !ok {
		return tool.Traits{}
	}
	t := tool.ReadOnlyTraits
	if a.ChangesDir() {
		t.ConcurrencySafe = false
	}
	return t
}

// describeBash is the description, else the command's first line, cut to
// 80 characters, with escapes made visible.
func describeBash(in BashInput) string {
	s := strings.TrimSpace(in.Description)
	if s == "" {
		s, _, _ = strings.Cut(strings.TrimSpace(in.Command), "\n")
	}
	return outbuf.EscapeDisplay(textutil.Truncate(s, 80))
}

// timeout is the call's deadline: the input's milliseconds capped at
// MaxTimeout before any arithmetic (a huge value such as 1e300 would
// overflow the conversion to a Duration and come out negative), the default
// for none, zero, a negative or a NaN.
func (b *bash) timeout(in BashInput) time.Duration {
	if in.Timeout == nil || !(*in.Timeout > 0) {
		return b.opt.DefaultTimeout
	}
	maxMS := float64(b.opt.MaxTimeout) / float64(time.Millisecond)
	if *in.Timeout >= maxMS {
		return b.opt.MaxTimeout
	}
	return max(time.Duration(*in.Timeout*float64(time.Millisecond)), time.Millisecond)
}

var errTimeout = errors.New("command timed out")

func (b *bash) call(ctx context.Context, env *tool.Env, in BashInput) (*tool.Result, error) {
	if env == nil {
		env = &tool.Env{}
	}
	shellPath, err := b.opt.shellPath()
	if err != nil {
		return nil, fmt.Errorf("bash not available: %w", err)
	}
	dir := resultsDir(env.ToolResultsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("results directory: %w", err)
	}
	spec := procSpec{
		shell:   shellPath,
		command: in.Command,
		dir:     env.WorkDir,
		env:     b.opt.environ(),
		grace:   b.opt.Grace,
		ledger:  b.opt.Ledger,
	}
	sb := sandboxOf(ctx, env, in)
	spec.supervise = needsSupervisor(sb)
	if sb != nil {
		policy := sb.Policy(env.WorkDir, env.AdditionalDirs...)
		spec.wrap = func(cmd *exec.Cmd) (func(), error) { return sb.Wrap(cmd, policy) }
		if !in.RunInBackground {
			// A foreground command's reverted protected paths are said
			// in its result; a background task's are logged by Wrap.
			reverted := new([]sandbox.Reverted)
			spec.reverted = reverted
			spec.wrap = func(cmd *exec.Cmd) (func(), error) {
				release, err := sb.WrapGuarded(cmd, policy)
				if err != nil {
					return nil, err
				}
				return func() { *reverted = release() }, nil
			}
		}
	}
	if ok, _ := shellparse.ReadOnlySource(in.Command); ok {
		// A read-only command may run without a prompt: git must not
		// run what a repository's configuration names.
		spec.env = append(spec.env, shellparse.GitReadEnv()...)
	}
	if in.RunInBackground {
		return b.background(env, in, spec, dir)
	}
	return b.foreground(ctx, env, in, spec, dir)
}

func (b *bash) background(env *tool.Env, in BashInput, spec procSpec, dir string) (*tool.Result, error) {
	tasks, err := tool.Use[*Jobs](env)
	if err != nil {
		return tool.Errorf("run_in_background is not available in this session (no task manager): %v. Run the command in the foreground instead.", err), nil
	}
	spec.out = outbuf.Options{HeadBytes: 4 << 10, TailBytes: 4 << 10, Limit: b.opt.MaxOutputBytes}
	info, err := tasks.start(spec, dir, in.Command, in.Description)
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("Command running in the background with task id %s. Its output is written to %s. "+
		"Read new output with TaskOutput (task_id %q); stop it with TaskStop.", info.ID, info.OutputPath, info.ID)
	r := tool.TextResult(text)
	r.Structured = BashOutput{TaskID: info.ID, OutputFile: info.OutputPath}
	return r, nil
}

func (b *bash) foreground(ctx context.Context, env *tool.Env, in BashInput, spec procSpec, dir string) (*tool.Result, error) {
	timeout := b.timeout(in)
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()

	spec.trackCwd = true

	pattern := "bash-" + sanitizeName(env.ToolUseID) + "-*.txt"
	spec.out = outbuf.Options{Limit: b.opt.MaxOutputBytes, Dir: dir, Pattern: pattern}
	p, err := startProc(spec)
	if err != nil {
		return nil, err
	}
	defer p.buf.Close()

	stopProgress := b.progress(env, p)
	stopped := p.wait(ctx)
	stopProgress()
	p.buf.Close()

	snap := p.buf.Snapshot()
	code, signal := p.exitStatus()
	out := render(snap.Head, snap.Tail, snap.Elided, snap.Total, b.opt.InlineChars, snap.Path, dir, pattern)
	res := BashOutput{
		ExitCode:    code,
		Truncated:   out.Truncated,
		OutputFile:  out.Path,
		OutputBytes: snap.Total,
	}
	var notes []string
	switch {
	case stopped == nil:
	case errors.Is(stopped, errOutputLimit):
		res.OutputLimited = true
		notes = append(notes, fmt.Sprintf("Output reached the %d MiB limit; the command was killed.", b.opt.MaxOutputBytes>>20))
	case errors.Is(stopped, errTimeout) || errors.Is(stopped, context.DeadlineExceeded):
		res.TimedOut = true
		notes = append(notes, fmt.Sprintf("Command timed out after %v and was terminated.", timeout.Round(time.Millisecond)))
	default:
		res.Interrupted = true
		notes = append(notes, "Command was interrupted and terminated.")
	}
	switch {
	case signal != "" && stopped == nil:
		notes = append(notes, fmt.Sprintf("Killed by signal %s (exit code %d).", signal, code))
	case code != 0 && stopped == nil:
		notes = append(notes, fmt.Sprintf("Exit code %d", code))
	}

	if spec.reverted != nil {
		if note := sandbox.Notice(*spec.reverted); note != "" {
			notes = append(notes, note)
		}
	}

	var modifier func(*tool.Env)
	if stopped == nil && signal == "" {
		if dir, note := b.newWorkDir(env, p); dir != "" {
			res.WorkDir = dir
			modifier = func(e *tool.Env) { e.WorkDir = dir }
		} else if note != "" {
			notes = append(notes, note)
		}
	}

	model, display := out.Model, out.Display
	if model == "" && len(notes) == 0 {
		model, display = "(no output)", "(no output)"
	}
	if len(notes) > 0 {
		tail := strings.Join(notes, "\n")
		if model != "" {
			model += "\n\n"
			display += "\n\n"
		}
		model += tail
		display += tail
	}
	res.Output = out.Model
	r := tool.TextResult(model).WithDisplay(tool.Text(display))
	r.IsError = code != 0 || stopped != nil
	r.Structured = res
	r.ContextModifier = modifier
	return r, nil
}

// newWorkDir reads the directory the shell ended in. It returns it when it
// differs from env's, exists and is allowed; else "" and, when the change
// was refused, a note. The report is only a hint — sandboxed code can forge
// it — so a directory outside the sandbox's fixed roots is refused, and the
// sandbox never derives what is writable from it ([sandbox.Options.Roots]).
func (b *bash) newWorkDir(env *tool.Env, p *proc) (string, string) {
	dir, ok := p.cwd()
	if !ok || dir == env.WorkDir || !strings.HasPrefix(dir, "/") {
		return "", ""
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", ""
	}
	if env.WorkDir != "" {
		if same, err := sameDir(dir, env.WorkDir); err == nil && same {
			return "", ""
		}
	}
	if sb, err := tool.Use[*sandbox.Sandbox](env); err == nil && sb.Contained() && !sb.Inside(dir) {
		return "", fmt.Sprintf("The working directory stays %s: %s is outside the directories this sandboxed session may use (%s).",
			env.WorkDir, dir, strings.Join(sb.Roots(), ", "))
	}
	if b.opt.AllowCwd != nil && !b.opt.AllowCwd(env, dir) {
		return "", fmt.Sprintf("The working directory stays %s: %s is outside the allowed directories.", env.WorkDir, dir)
	}
	return dir, ""
}

func sameDir(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}

// progress reports the latest output lines every ProgressInterval until the
// returned stop function is called.
func (b *bash) progress(env *tool.Env, p *proc) (stop func()) {
	if env.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(b.opt.ProgressInterval)
		defer t.Stop()
		var last int64 // no report before the first output
		for {
			select {
			case <-done:
				return
			case <-t.C:
				n := p.buf.Len()
				if n == last {
					continue
				}
				last = n
				lines := lastLines(p.buf.Last(4096), 5)
				msg := lines
				if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
					msg = msg[i+1:]
				}
				msg, _ = textutil.Head(msg, 200)
				env.ReportProgress(outbuf.EscapeDisplay(msg), Progress{Output: lines, Bytes: n})
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// Progress is the Data of a Bash progress report.
type Progress struct {
	// Output is the last lines of output, escapes stripped.
	Output string `json:"output"`
	// Bytes is the output's size so far.
	Bytes int64 `json:"bytes"`
}
