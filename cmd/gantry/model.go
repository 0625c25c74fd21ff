package main

import "github.com/gantry-dev/gantry/settings"

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
