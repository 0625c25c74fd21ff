package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The settings' model (what the Config tool sets) is used when neither
// --model nor GANTRY_MODEL is given.
func TestSettingsModel(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, ".gantry"), 0o700)
	os.WriteFile(filepath.Join(home, ".gantry", "settings.json"), []byte(`{"model": "from-settings"}`), 0o600)
	env := map[string]string{"HOME": home}
	a := &app{stdin: strings.NewReader(""), getenv: func(k string) string { return env[k] }}
	for _, tc := range []struct {
		flag, envModel string
		noSettings     bool
		want           string
	}{
		{want: "from-settings"},
		{flag: "from-flag", want: "from-flag"},
		{envModel: "from-env", want: ""}, // newProvider reads GANTRY_MODEL
		{noSettings: true, want: ""},
	} {
		env["GANTRY_MODEL"] = tc.envModel
		got := settingsModel(a, &runFlags{model: tc.flag, safetyFlags: safetyFlags{noSettings: tc.noSettings}}, newRunSettings(a, dir))
		if got != tc.want {
			t.Errorf("%+v: %q", tc, got)
		}
	}
}
