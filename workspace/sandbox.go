package workspace

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"

	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/sandbox"
)

// openSandbox builds the session's sandbox from Options.Sandbox or the
// settings, says once (through Options.Warn) when the settings ask for a
// sandbox that no backend provides, and registers its Close.
func (w *Workspace) openSandbox(opts Options, cfg permission.Options, dir, home string) (*sandbox.Sandbox, error) {
	var so sandbox.Options
	switch {
	case opts.Sandbox != nil:
		so = *opts.Sandbox
	case w.settings != nil:
		es := w.settings.Sandbox()
		hide, ro, write := permission.SandboxPaths(cfg.Rules, dir, home)
		so = sandbox.Options{
			Enabled: es.Enabled, Backend: es.Backend, AutoAllow: es.AutoAllowBashIfSandboxed,
			ExcludedCommands: es.ExcludedCommands, AllowUnsandboxed: es.AllowUnsandboxedCommands,
			Write: write, Hide: hide, ReadOnly: ro,
			AllowedDomains: es.AllowedDomains, AllowLocalBinding: es.AllowLocalBinding,
			AllowUnixSockets: es.AllowUnixSockets, AllowAllUnixSockets: es.AllowAllUnixSockets,
		}
	}
	if len(so.Roots) == 0 {
		// The writable area is fixed now, from the project and the granted
		// directories, never from where a command later says it is.
		so.Roots = append([]string{dir}, cfg.AdditionalDirs...)
	}
	if so.Logger == nil && opts.Warn != nil {
		so.Logger = slog.New(warnHandler{opts.Warn})
	}
	sb, err := sandbox.New(so)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	w.closers = append(w.closers, sb.Close)
	if sb.Unavailable() {
		w.warn(opts, "sandbox: "+sb.Status().Reason+"; commands run WITHOUT a sandbox")
	}
	return sb, nil
}

// sandboxHooks is hook.Config.Sandbox for the session: nil without an
// enabled sandbox (hooks that opt in then fail rather than run uncontained).
func (w *Workspace) sandboxHooks() func(*exec.Cmd, string) (func(), error) {
	sb := w.sandbox
	if sb == nil || !sb.Status().Enabled {
		return nil
	}
	return func(cmd *exec.Cmd, dir string) (func(), error) {
		if dir == "" {
			dir = w.dir
		}
		return sb.Wrap(cmd, sb.Policy(dir))
	}
}

// sandboxMCP is mcptool.Options.Sandbox for the session (nil without an
// enabled sandbox): servers that opt in may write the working directory.
func (w *Workspace) sandboxMCP(dirs []string) func(*exec.Cmd) (func(), error) {
	sb := w.sandbox
	if sb == nil || !sb.Status().Enabled {
		return nil
	}
	return func(cmd *exec.Cmd) (func(), error) { return sb.Wrap(cmd, sb.Policy(w.dir, dirs...)) }
}

// warnHandler sends log records to Options.Warn as one line each.
type warnHandler struct{ warn func(string) }

func (h warnHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h warnHandler) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool {
		msg += fmt.Sprintf(" %s=%q", a.Key, a.Value.String())
		return true
	})
	h.warn(msg)
	return nil
}
func (h warnHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h warnHandler) WithGroup(string) slog.Handler      { return h }
