//go:build !linux

package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// OpenRoot opens dir as a root. On this platform the guarantee is weaker
// than on Linux: names are resolved with [os.Root], which follows symbolic
// links that stay beneath the root.
func OpenRoot(dir string) (*Root, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("safefs: root %q is not absolute", dir)
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	return &Root{root: f, name: filepath.Clean(dir)}, nil
}

func (r *Root) osRoot() (*os.Root, error) { return os.OpenRoot(r.name) }

// OpenFile opens name beneath r.
func (r *Root) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	n, err := checkName(name)
	if err != nil {
		return nil, err
	}
	or, err := r.osRoot()
	if err != nil {
		return nil, err
	}
	defer or.Close()
	return or.OpenFile(n, flag, perm)
}

// MkdirAll creates name and the missing directories above it beneath r.
func (r *Root) MkdirAll(name string, perm fs.FileMode) error {
	n, err := checkName(name)
	if err != nil {
		return err
	}
	or, err := r.osRoot()
	if err != nil {
		return err
	}
	defer or.Close()
	return or.MkdirAll(n, perm)
}

// WriteFile replaces (or creates) name beneath r with data atomically.
func (r *Root) WriteFile(name string, data []byte, perm fs.FileMode, opts WriteOptions) (_ fs.FileInfo, err error) {
	n, err := checkName(name)
	if err != nil {
		return nil, err
	}
	or, err := r.osRoot()
	if err != nil {
		return nil, err
	}
	defer or.Close()
	dir, base := path.Split(n)
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, tempName(base, hex.EncodeToString(rnd[:])))
	if opts.Journal != nil {
		if err := opts.Journal.begin(r.Path(tmp)); err != nil {
			return nil, err
		}
		defer opts.Journal.end(r.Path(tmp))
	}
	f, err := or.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
			or.Remove(tmp)
		}
	}()
	var w io.Writer = f
	if opts.Wrap != nil {
		w = opts.Wrap(f)
	}
	k, err := w.Write(data)
	if err == nil && k < len(data) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", r.Path(n), err)
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	if err := f.Chmod(perm.Perm()); err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if err := or.Rename(tmp, n); err != nil {
		return nil, err
	}
	return renamed{info, base}, nil
}

type renamed struct {
	fs.FileInfo
	name string
}

func (r renamed) Name() string { return r.name }
