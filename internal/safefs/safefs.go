// Package safefs opens, creates and atomically replaces files beneath a root
// directory without following symbolic links, so the file an operation
// reaches is exactly the path it was given: a link swapped into the path
// between a permission check and the write makes the operation fail, it never
// redirects it.
//
// On Linux every lookup is one openat2(2) call with RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS (kernel 5.6+); where the kernel lacks openat2 the same
// guarantee comes from a walk that opens one component at a time with
// O_NOFOLLOW relative to the previous component's descriptor. Replacing a
// file is a temporary file created in the already-opened parent directory,
// written, synced, given its mode and renamed over the target with renameat
// on that same descriptor — never by path.
//
// The package is the one primitive of Gantry's file tools (Read's open,
// Write, Edit, NotebookEdit).
package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrSymlink is wrapped by the errors of operations that met a symbolic link
// in the path (a link is never followed).
var ErrSymlink = errors.New("a component of the path is a symbolic link")

// ErrEscape is wrapped by the errors of operations given an absolute name
// or one with a ".." element: names are relative to the root and stay
// beneath it.
var ErrEscape = errors.New("the name leaves the root")

// Root is an open directory beneath which names are resolved. A Root is safe
// for concurrent use; Close releases its descriptor.
type Root struct {
	root *os.File
	name string
}

// Close closes the root's descriptor.
func (r *Root) Close() error { return r.root.Close() }

// Path returns the absolute path of name beneath r.
func (r *Root) Path(name string) string { return filepath.Join(r.name, name) }

// checkName validates a name relative to a root: not absolute, no ".."
// element, no NUL byte. "" and "." name the root itself.
func checkName(name string) (string, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return "", fmt.Errorf("%q: the name contains a NUL byte", name)
	}
	if name == "" {
		return ".", nil
	}
	if path.IsAbs(name) {
		return "", fmt.Errorf("%s: %w (absolute)", name, ErrEscape)
	}
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			return "", fmt.Errorf("%s: %w", name, ErrEscape)
		}
	}
	return path.Clean(name), nil
}

// Rel returns name relative to root, both absolute and clean, and whether
// name is root or beneath it.
func Rel(root, name string) (string, bool) {
	if root == name {
		return ".", true
	}
	prefix := root
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if !strings.HasPrefix(name, prefix) {
		return "", false
	}
	return name[len(prefix):], true
}

// WriteOptions configure [Root.WriteFile]. The zero value is ready to use.
type WriteOptions struct {
	// Journal, when not nil, records the temporary file while it exists,
	// so that a crash leaves nothing behind for good: the next
	// [OpenJournal] on the same directory removes it.
	Journal *Journal
	// Wrap, when not nil, wraps the writer of the temporary file (a seam
	// for tests that inject faults such as a full disk).
	Wrap func(io.Writer) io.Writer
}

// tempPrefix and tempSuffix frame the names of temporary files, which are
// hidden siblings of the target: ".<name>.gantry-<8 hex>.tmp".
const (
	tempInfix  = ".gantry-"
	tempSuffix = ".tmp"
	maxBase    = 200 // keeps the temporary name under NAME_MAX (255)
)

// IsTempName reports whether base is the name of one of WriteFile's
// temporary files.
func IsTempName(base string) bool {
	if !strings.HasPrefix(base, ".") || !strings.HasSuffix(base, tempSuffix) {
		return false
	}
	i := strings.LastIndex(base, tempInfix)
	if i < 0 {
		return false
	}
	hex := base[i+len(tempInfix) : len(base)-len(tempSuffix)]
	if len(hex) != 8 {
		return false
	}
	for _, c := range hex {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func tempName(base, rnd string) string {
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	return "." + base + tempInfix + rnd + tempSuffix
}

// fillTemp writes data to a new temporary file f (through wrap, if set),
// syncs it, gives it perm exactly, and closes it, returning its info. On
// error f is left for the caller to close and remove.
func fillTemp(f *os.File, target string, data []byte, perm fs.FileMode, wrap func(io.Writer) io.Writer) (fs.FileInfo, error) {
	var w io.Writer = f
	if wrap != nil {
		w = wrap(f)
	}
	k, err := w.Write(data)
	if err == nil && k < len(data) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", target, err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("sync %s: %w", target, err)
	}
	if err := f.Chmod(perm.Perm()); err != nil {
		return nil, fmt.Errorf("chmod %s: %w", target, err)
	}
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", target, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", target, err)
	}
	return info, nil
}

// renamed is the temporary file's info under the target's name.
type renamed struct {
	fs.FileInfo
	name string
}

func (r renamed) Name() string { return r.name }
