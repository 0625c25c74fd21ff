package main

import (
	"fmt"
	"time"

	"github.com/gantry-dev/gantry/settings"
)

// settingsModel is the model to ask for: --model, else GANTRY_MODEL (read by
// newProvider), else the settings' "model" (which the Config tool sets).
func settingsModel(a *app, f *runFlags, dir string) string {
	if f.model != "" || a.getenv("GANTRY_MODEL") != "" || f.noSettings {
		return f.model
	}
	st, err := settings.Load(settings.Options{ProjectDir: dir, Getenv: a.getenv})
	if err != nil {
		return ""
	}
	m, _ := st.Model()
	return m
}

// settingsIdleTimeout is the model stream idle timeout of the settings'
// "streamIdleTimeoutMs" (0 = the default), consulted only where neither
// --stream-idle-timeout nor GANTRY_STREAM_IDLE_TIMEOUT sets one.
func settingsIdleTimeout(a *app, f *runFlags, dir string) (time.Duration, error) {
	if f.idleTimeout != 0 || a.getenv(streamIdleEnv) != "" || f.noSettings {
		return f.idleTimeout, nil
	}
	st, err := settings.Load(settings.Options{ProjectDir: dir, Getenv: a.getenv})
	if err != nil {
		return 0, fmt.Errorf("stream idle timeout: %w", err)
	}
	d, _ := st.StreamIdleTimeout()
	return d, nil
}
