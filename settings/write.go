package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/tool"
)

// writeJSON writes v as indented JSON to path atomically: a temp file in the
// same directory, fsync, rename. The directory is created (0700) if needed;
// an existing file keeps its mode, a new one gets 0600.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("settings: encode %s: %w", path, err)
	}
	b = append(b, '\n')
	return writeAtomic(path, b)
}

func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	mode := fs.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("settings: write %s: %w", path, err)
	}
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("settings: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	ok = true
	return nil
}

// RuleKind is one of the permission rule lists.
type RuleKind string

const (
	Allow RuleKind = "allow"
	Deny  RuleKind = "deny"
	Ask   RuleKind = "ask"
)

// Change is one permission update written by [Update].
type Change struct {
	// AddRules appends rules (not already present) to the Kind list.
	Kind     RuleKind
	AddRules []string
	// Mode, if set, becomes permissions.defaultMode.
	Mode tool.Mode
	// AddDirectories are appended to permissions.additionalDirectories.
	AddDirectories []string
}

// Update applies c to the settings file at path, atomically, keeping every
// key Gantry does not know and the order of the existing lists. A missing
// file is created.
func Update(path string, c Change) error {
	doc, err := readDoc(path)
	if err != nil {
		return err
	}
	perms := map[string]json.RawMessage{}
	if raw, ok := doc["permissions"]; ok {
		if err := json.Unmarshal(raw, &perms); err != nil {
			return fmt.Errorf("settings: %s: permissions: %w", path, err)
		}
	}
	addList := func(key string, add []string) error {
		if len(add) == 0 {
			return nil
		}
		var list []string
		if raw, ok := perms[key]; ok {
			if err := json.Unmarshal(raw, &list); err != nil {
				return fmt.Errorf("settings: %s: permissions.%s: %w", path, key, err)
			}
		}
		for _, r := range add {
			if !slices.Contains(list, r) {
				list = append(list, r)
			}
		}
		raw, _ := json.Marshal(list)
		perms[key] = raw
		return nil
	}
	if len(c.AddRules) > 0 {
		switch c.Kind {
		case Allow, Deny, Ask:
		default:
			return fmt.Errorf("settings: unknown rule kind %q", c.Kind)
		}
		if err := addList(string(c.Kind), c.AddRules); err != nil {
			return err
		}
	}
	if err := addList("additionalDirectories", c.AddDirectories); err != nil {
		return err
	}
	if c.Mode != "" {
		if !c.Mode.Valid() {
			return fmt.Errorf("settings: unknown mode %q", c.Mode)
		}
		raw, _ := json.Marshal(c.Mode)
		perms["defaultMode"] = raw
	}
	raw, err := json.Marshal(perms)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	doc["permissions"] = raw
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	return writeAtomic(path, append(out, '\n'))
}

// SetKey sets one key of the settings file at path, atomically, keeping
// every other key. key is a top-level key ("model") or a key inside one
// object ("permissions.defaultMode"); a nil value removes the key. A
// missing file is created. SetKey does not judge what may be set: callers
// that act for a model (builtin/config) keep their own allow-list.
func SetKey(path, key string, value any) error {
	doc, err := readDoc(path)
	if err != nil {
		return err
	}
	set := func(m map[string]json.RawMessage, k string) error {
		if value == nil {
			delete(m, k)
			return nil
		}
		raw, err := json.Marshal(value)
		if err != nil {
			return fmt.Errorf("settings: %s: %w", key, err)
		}
		m[k] = raw
		return nil
	}
	outer, inner, nested := strings.Cut(key, ".")
	if !nested {
		if err := set(doc, outer); err != nil {
			return err
		}
	} else {
		obj := map[string]json.RawMessage{}
		if raw, ok := doc[outer]; ok {
			if err := json.Unmarshal(raw, &obj); err != nil {
				return fmt.Errorf("settings: %s: %s: %w", path, outer, err)
			}
		}
		if err := set(obj, inner); err != nil {
			return err
		}
		raw, err := json.Marshal(obj)
		if err != nil {
			return fmt.Errorf("settings: %w", err)
		}
		doc[outer] = raw
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	return writeAtomic(path, append(out, '\n'))
}

// readDoc reads a settings file as its top-level keys (a missing or empty
// file is an empty document), for writers that keep what they do not know.
func readDoc(path string) (map[string]json.RawMessage, error) {
	doc := map[string]json.RawMessage{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("settings: %w", err)
	case len(bytes.TrimSpace(b)) > 0:
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("settings: %s: %w", path, err)
		}
	}
	return doc, nil
}
