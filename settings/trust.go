package settings

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// TrustFile is the name of the trust record under the Gantry home.
const TrustFile = "trusted-folders.json"

// TrustStore is the record of folders the user trusts, a JSON file
// (default $GANTRY_HOME/trusted-folders.json):
//
//	{"folders": [{"path": "/home/u/project", "trusted_at": "2026-01-02T15:04:05Z"}]}
//
// A folder is trusted if it or one of its parents is recorded and its
// project configuration ([ProjectConfigFiles]) is the one the trust covers.
// Trust pins that configuration: [TrustStore.Trust] records a digest of the
// files, and the first check of a project inside a trusted parent pins the
// files it finds. A project whose configuration changed since — a settings
// file planted, edited or removed, by a command of a session or by anyone
// else outside Gantry — is not trusted until the person trusts it again (as
// direnv asks again for a changed .envrc): a hook planted by a sandboxed
// command never runs outside the sandbox unasked. Paths are compared after
// symlinks are resolved, element by element (never by string prefix). A
// TrustStore is safe for concurrent use within a process; writes are atomic
// (temp file and rename).
type TrustStore struct {
	// Path is the record's file.
	Path string
	// Now returns the current time; default time.Now.
	Now func() time.Time

	mu sync.Mutex
}

// TrustRecord is one trusted folder.
type TrustRecord struct {
	Path      string    `json:"path"`
	TrustedAt time.Time `json:"trusted_at"`
}

type trustDoc struct {
	Folders []TrustRecord `json:"folders"`
	// Config maps a trusted project directory to the digest of its
	// configuration files when the trust was given (or first used).
	Config map[string]string `json:"config,omitempty"`
}

// ProjectConfigFiles are the files of a project, relative to it, whose
// content runs code or widens permissions once the folder is trusted:
// settings (hooks, allow rules, environment, modes, sandbox keys). Trust
// covers them as they were when it was given. (The servers of .mcp.json
// have their own approval, which pins each server's definition: see
// [MCPApprovals].)
var ProjectConfigFiles = []string{
	".gantry/settings.json", ".gantry/settings.local.json",
	".claude/settings.json", ".claude/settings.local.json",
}

// ConfigDigest returns a digest of dir's [ProjectConfigFiles]: their
// names, whether each exists, and their content. A file that cannot be read
// (other than missing) changes the digest to a value no trust matches.
func ConfigDigest(dir string) string {
	h := sha256.New()
	for _, name := range ProjectConfigFiles {
		b, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(h, "%s absent\n", name)
		case err != nil:
			fmt.Fprintf(h, "%s unreadable %d\n", name, time.Now().UnixNano())
		default:
			fmt.Fprintf(h, "%s %d\n", name, len(b))
			h.Write(b)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// TrustState is what [TrustStore.Check] found.
type TrustState int

const (
	// Untrusted: neither the folder nor a parent is recorded.
	Untrusted TrustState = iota
	// Trusted: recorded, and the configuration is the one trusted.
	Trusted
	// ConfigChanged: recorded, but the project configuration changed
	// since the trust was given; it counts as untrusted.
	ConfigChanged
)

func (s TrustState) String() string {
	switch s {
	case Untrusted:
		return "untrusted"
	case Trusted:
		return "trusted"
	case ConfigChanged:
		return "configuration changed since trusted"
	}
	return fmt.Sprintf("TrustState(%d)", int(s))
}

func (t *TrustStore) read() (trustDoc, error) {
	var d trustDoc
	b, err := os.ReadFile(t.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, fmt.Errorf("settings: trust record: %w", err)
	}
	if len(trimSpace(b)) == 0 {
		return d, nil
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("settings: trust record %s: %w", t.Path, err)
	}
	return d, nil
}

// Canonical returns the absolute, cleaned path of dir with symlinks
// resolved (as far as the path exists).
func Canonical(dir string) (string, error) {
	if strings.IndexByte(dir, 0) >= 0 {
		return "", errors.New("settings: path contains a NUL byte")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r, nil
	}
	return abs, nil
}

// Within reports whether path is dir or inside it, comparing cleaned
// absolute paths element by element.
func Within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// IsTrusted reports whether dir (or a parent) is recorded as trusted and
// its project configuration is the one the trust covers ([TrustStore.Check]).
func (t *TrustStore) IsTrusted(dir string) (bool, error) {
	st, err := t.Check(dir)
	return st == Trusted, err
}

// Check reports whether dir is trusted. A trusted folder whose
// configuration has no recorded digest yet (a project inside a trusted
// parent, or a record written before digests) has its current
// configuration pinned now.
func (t *TrustStore) Check(dir string) (TrustState, error) {
	c, err := Canonical(dir)
	if err != nil {
		return Untrusted, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	d, err := t.read()
	if err != nil {
		return Untrusted, err
	}
	if !slices.ContainsFunc(d.Folders, func(r TrustRecord) bool { return Within(c, r.Path) }) {
		return Untrusted, nil
	}
	digest := ConfigDigest(c)
	switch pinned, ok := d.Config[c]; {
	case ok && pinned == digest:
		return Trusted, nil
	case ok:
		return ConfigChanged, nil
	}
	if d.Config == nil {
		d.Config = map[string]string{}
	}
	d.Config[c] = digest
	return Trusted, writeJSON(t.Path, d)
}

// Trust records dir as trusted, with its configuration as it is now.
// Trusting a folder already trusted (or inside a trusted one) records the
// configuration again.
func (t *TrustStore) Trust(dir string) error {
	c, err := Canonical(dir)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	d, err := t.read()
	if err != nil {
		return err
	}
	if d.Config == nil {
		d.Config = map[string]string{}
	}
	d.Config[c] = ConfigDigest(c)
	if slices.ContainsFunc(d.Folders, func(r TrustRecord) bool { return Within(c, r.Path) }) {
		return writeJSON(t.Path, d)
	}
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	d.Folders = append(d.Folders, TrustRecord{Path: c, TrustedAt: now().UTC()})
	slices.SortFunc(d.Folders, func(a, b TrustRecord) int { return strings.Compare(a.Path, b.Path) })
	return writeJSON(t.Path, d)
}

// Revoke removes dir's own record (parents stay trusted).
func (t *TrustStore) Revoke(dir string) error {
	c, err := Canonical(dir)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	d, err := t.read()
	if err != nil {
		return err
	}
	n := len(d.Folders)
	d.Folders = slices.DeleteFunc(d.Folders, func(r TrustRecord) bool { return r.Path == c })
	_, pinned := d.Config[c]
	delete(d.Config, c)
	if len(d.Folders) == n && !pinned {
		return nil
	}
	return writeJSON(t.Path, d)
}

// Folders lists the trusted folders.
func (t *TrustStore) Folders() ([]TrustRecord, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, err := t.read()
	return d.Folders, err
}

// PromptTrust asks the person at a terminal whether to trust dir, reading
// one line from in: "y" or "yes" (any case) trusts and records it in t;
// anything else, end of input or a cancelled ctx does not. The CLI calls it
// only when stdin is a TTY; elsewhere use --trust. The read runs in a
// goroutine; if ctx ends first, that goroutine stays blocked on in until it
// yields a line or fails (close in to release it).
func PromptTrust(ctx context.Context, t *TrustStore, in io.Reader, out io.Writer, dir string) (bool, error) {
	fmt.Fprintf(out, "Do you trust the files in %s?\n"+
		"Its settings may run hooks and commands, set environment variables and allow tools.\n"+
		"Trust this folder? [y/N] ", dir)
	yes, err := ReadYes(ctx, in)
	if err != nil {
		return false, fmt.Errorf("settings: reading answer: %w", err)
	}
	if yes {
		return true, t.Trust(dir)
	}
	return false, nil
}

// ReadYes reads one line from in: true for "y" or "yes" (any case), false for
// anything else or end of input. A cancelled ctx returns its error; the
// reading goroutine then stays blocked on in until it yields a line or fails
// (close in to release it).
func ReadYes(ctx context.Context, in io.Reader) (bool, error) {
	type answer struct {
		line string
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReader(in).ReadString('\n')
		ch <- answer{line, err}
	}()
	var a answer
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case a = <-ch:
	}
	if a.err != nil && !errors.Is(a.err, io.EOF) {
		return false, a.err
	}
	switch strings.ToLower(strings.TrimSpace(a.line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
