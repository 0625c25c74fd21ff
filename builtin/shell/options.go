package shell

import (
	"os"
	"os/exec"
	"time"

	"github.com/gantry-dev/gantry/internal/procenv"
	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/tool"
)

// Defaults of [Options].
const (
	DefaultTimeout          = 120 * time.Second
	MaxTimeout              = 600 * time.Second
	DefaultGrace            = 2 * time.Second
	DefaultMaxOutputBytes   = 100 << 20
	DefaultInlineChars      = 30_000
	DefaultProgressInterval = time.Second
	DefaultOutputWait       = 30 * time.Second
)

// DefaultSetEnv are the variables set for every command so that nothing
// waits on a terminal that is not there: editors exit at once, pagers print,
// git and credential helpers never prompt, colours are off.
var DefaultSetEnv = []string{
	"GIT_EDITOR=true", "EDITOR=true", "VISUAL=true",
	"PAGER=cat", "GIT_PAGER=cat", "MANPAGER=cat", "SYSTEMD_PAGER=",
	"GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=never", "DEBIAN_FRONTEND=noninteractive",
	"TERM=dumb", "GANTRY=1",
}

// Options configure the shell tools. The zero value is ready to use.
type Options struct {
	// Shell is the bash binary. Empty means "bash" on PATH; the Bash tool is
	// disabled ([tool.Enabler]) when it cannot be found.
	Shell string
	// DefaultTimeout is a command's deadline when the call gives none
	// (default 120 s); MaxTimeout caps the call's timeout (default 600 s).
	DefaultTimeout, MaxTimeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL, and the longest wait
	// for the output pipe after the shell exits (default 2 s).
	Grace time.Duration
	// MaxOutputBytes is the hard cap of a command's output; past it the
	// command is killed (default 100 MiB).
	MaxOutputBytes int64
	// InlineChars is how many characters of output the model gets inline;
	// a longer output is cut in the middle and saved whole to a file
	// (default 30,000).
	InlineChars int
	// ProgressInterval is how often a running foreground command reports
	// its latest output (default 1 s).
	ProgressInterval time.Duration
	// Environ returns the base environment (default os.Environ).
	Environ func() []string
	// AllowEnv are the variables (path.Match patterns) a command gets from
	// the base environment; names that look like credentials never pass
	// (see [procenv.Build]). Nil means [procenv.DefaultAllow]; an empty
	// non-nil slice passes nothing.
	AllowEnv []string
	// Env are variables the user configured for commands (settings
	// "env"), added after the base; Gantry's own provider keys
	// ([procenv.Own]) are never added.
	Env map[string]string
	// SetEnv are NAME=value settings applied last (default
	// [DefaultSetEnv]; an empty non-nil slice sets nothing).
	SetEnv []string
	// AllowCwd, if set, decides whether a command may move the session's
	// working directory to dir; when it says no the working directory stays
	// and the result says so. Nil allows any existing directory.
	AllowCwd func(env *tool.Env, dir string) bool
	// Ledger, if set, records every running command (and its temporary
	// files) so that the next process can kill what is left of it if this
	// one dies, even by SIGKILL ([sandbox.ReapLedger]; `gantry serve` sets
	// it). Nil records nothing.
	Ledger *sandbox.Ledger
}

func (o Options) withDefaults() Options {
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = DefaultTimeout
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = MaxTimeout
	}
	if o.DefaultTimeout > o.MaxTimeout {
		o.DefaultTimeout = o.MaxTimeout
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if o.InlineChars <= 0 {
		o.InlineChars = DefaultInlineChars
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = DefaultProgressInterval
	}
	if o.Environ == nil {
		o.Environ = os.Environ
	}
	if o.SetEnv == nil {
		o.SetEnv = DefaultSetEnv
	}
	return o
}

// shellPath resolves the bash binary.
func (o Options) shellPath() (string, error) {
	name := o.Shell
	if name == "" {
		name = "bash"
	}
	return exec.LookPath(name)
}

// environ builds a command's environment: the allowed variables of the
// base (never a credential, BASH_ENV or ENV: a non-interactive bash would
// source them despite --norc), the configured ones, then SetEnv.
func (o Options) environ() []string {
	return procenv.Build(o.Environ(), procenv.Options{Allow: o.AllowEnv, Explicit: o.Env, Set: o.SetEnv})
}
