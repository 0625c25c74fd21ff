package home

import (
	"path/filepath"
	"testing"
)

func TestDir(t *testing.T) {
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		name     string
		getenv   func(string) string
		userHome string
		want     string
	}{
		{"GANTRY_HOME wins", env(map[string]string{"GANTRY_HOME": "/g", "HOME": "/h"}), "/u", "/g"},
		{"user home over $HOME", env(map[string]string{"HOME": "/h"}), "/u", filepath.Join("/u", ".gantry")},
		{"$HOME", env(map[string]string{"HOME": "/h"}), "", filepath.Join("/h", ".gantry")},
		{"empty GANTRY_HOME is unset", env(map[string]string{"GANTRY_HOME": "", "HOME": "/h"}), "", filepath.Join("/h", ".gantry")},
		{"nothing", env(nil), "", ""},
		{"nil getenv reads nothing", nil, "", ""},
		{"nil getenv with user home", nil, "/u", filepath.Join("/u", ".gantry")},
	} {
		if got := Dir(tc.getenv, tc.userHome); got != tc.want {
			t.Errorf("%s: Dir = %q, want %q", tc.name, got, tc.want)
		}
	}
}
