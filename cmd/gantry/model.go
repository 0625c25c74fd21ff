package main

import (
	"fmt"
	"time"

	"github.com/gantry-dev/gantry/settings"
)

// settingsModel is the model to ask for: --model, else GANTRY_MODEL (read by
// newProvider), else the settings' "model" (which the Config tool sets).
func settingsModel(a *app, f *runFlags, rs *runSettings) string {
	if f.model != "" || a.getenv("GANTRY_MODEL") != "" || f.noSettings {
		return f.model
	}
	st, err := rs.load()
	if err != nil {
		return ""
	}
	m, _ := st.Model()
	return m
}

// settingsIdleTimeout is the model stream idle timeout of the settings'
// "streamIdleTimeoutMs" (0 = the default), consulted only where neither
// --stream-idle-timeout nor GANTRY_STREAM_IDLE_TIMEOUT sets one.
func settingsIdleTimeout(a *app, f *runFlags, rs *runSettings) (time.Duration, error) {
	if f.idleTimeout != 0 || a.getenv(streamIdleEnv) != "" || f.noSettings {
		return f.idleTimeout, nil
	}
	st, err := rs.load()
	if err != nil {
		return 0, fmt.Errorf("stream idle timeout: %w", err)
	}
	d, _ := st.StreamIdleTimeout()
	return d, nil
}

// runSettings reads the settings of directory dir that a run consults
// before its workspace opens (the model, the stream idle timeout, whether
// to ask for trust) once, when the first of them is asked for; the
// workspace reads its own after the trust prompt (with the policy path
// and setting sources of the command line).
type runSettings struct {
	a    *app
	dir  string
	read bool
	st   *settings.Settings
	err  error
}

func newRunSettings(a *app, dir string) *runSettings { return &runSettings{a: a, dir: dir} }

func (r *runSettings) load() (*settings.Settings, error) {
	if !r.read {
		r.read = true
		r.st, r.err = settings.Load(settings.Options{ProjectDir: r.dir, Getenv: r.a.getenv})
	}
	return r.st, r.err
}
