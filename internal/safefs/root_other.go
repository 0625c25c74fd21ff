//go:build !linux

package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
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

// within runs fn with an os.Root of r and the checked name.
func (r *Root) within(name string, fn func(or *os.Root, n string) error) error {
	n, err := checkName(name)
	if err != nil {
		return err
	}
	or, err := os.OpenRoot(r.name)
	if err != nil {
		return err
	}
	defer or.Close()
	return fn(or, n)
}

// OpenFile opens name beneath r.
func (r *Root) OpenFile(name string, flag int, perm fs.FileMode) (f *os.File, err error) {
	err = r.within(name, func(or *os.Root, n string) error {
		f, err = or.OpenFile(n, flag, perm)
		return err
	})
	return f, err
}

// MkdirAll creates name and the missing directories above it beneath r.
func (r *Root) MkdirAll(name string, perm fs.FileMode) error {
	return r.within(name, func(or *os.Root, n string) error { return or.MkdirAll(n, perm) })
}

// WriteFile replaces (or creates) name beneath r with data atomically.
func (r *Root) WriteFile(name string, data []byte, perm fs.FileMode, opts WriteOptions) (info fs.FileInfo, err error) {
	err = r.within(name, func(or *os.Root, n string) (err error) {
		dir, base := path.Split(n)
		var rnd [4]byte
		_, _ = rand.Read(rnd[:])
		tmp := path.Join(dir, tempName(base, hex.EncodeToString(rnd[:])))
		if opts.Journal != nil {
			if err := opts.Journal.begin(r.Path(tmp)); err != nil {
				return err
			}
			defer opts.Journal.end(r.Path(tmp))
		}
		f, err := or.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		defer func() {
			if err != nil {
				f.Close()
				or.Remove(tmp)
			}
		}()
		fi, err := fillTemp(f, r.Path(n), data, perm, opts.Wrap)
		if err != nil {
			return err
		}
		if err := or.Rename(tmp, n); err != nil {
			return err
		}
		info = renamed{fi, base}
		return nil
	})
	return info, err
}
