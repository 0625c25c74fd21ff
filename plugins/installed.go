package plugins

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// InstalledFile is where the reference agent records the plugins it
// installed from marketplaces, relative to the user's home. Gantry
// installs no plugin itself; it reads this record to find the plugins
// settings' enabledPlugins name.
const InstalledFile = ".claude/plugins/installed_plugins.json"

// maxInstalledBytes bounds the record.
const maxInstalledBytes = 4 << 20

// Installed reads the installed-plugins record under home and returns each
// plugin's directory keyed "plugin@marketplace". Both layouts the
// reference has written are read: version 1, where a key maps to one
// object with installPath, and version 2, where it maps to a list of
// installs (the first with an installPath is taken). A missing record is
// no plugins; a record that is not JSON, or names a relative installPath,
// is an error.
func Installed(home string) (map[string]string, error) {
	path := filepath.Join(home, InstalledFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("plugins: %w", err)
	}
	if len(b) > maxInstalledBytes {
		return nil, fmt.Errorf("plugins: %s: larger than %d bytes", path, maxInstalledBytes)
	}
	return parseInstalled(b, path)
}

type install struct {
	InstallPath string `json:"installPath"`
}

func parseInstalled(b []byte, path string) (map[string]string, error) {
	var doc struct {
		Plugins map[string]json.RawMessage `json:"plugins"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("plugins: %s: %w", path, err)
	}
	out := map[string]string{}
	for key, raw := range doc.Plugins {
		var installs []install
		if err := json.Unmarshal(raw, &installs); err != nil {
			var one install
			if err := json.Unmarshal(raw, &one); err != nil {
				return nil, fmt.Errorf("plugins: %s: plugin %q: want an object or a list of installs", path, key)
			}
			installs = []install{one}
		}
		for _, in := range installs {
			if in.InstallPath == "" {
				continue
			}
			if !filepath.IsAbs(in.InstallPath) {
				return nil, fmt.Errorf("plugins: %s: plugin %q: installPath %q is not absolute", path, key, in.InstallPath)
			}
			out[key] = filepath.Clean(in.InstallPath)
			break
		}
	}
	return out, nil
}
