package file

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/safefs"
	"github.com/gantry-dev/gantry/tool"
)

// targetOf returns the file a call acts on for the model-given path raw
// (already made absolute and clean as path): the file the permission
// decision resolved raw to, when it recorded one (env.Checked), else path
// with its symbolic links resolved now. The tools then open that file
// without following any link (see [openPlace]), so a link swapped between
// the check and the call can fail the call but never redirect it.
func targetOf(env *tool.Env, raw, path string) string {
	if env != nil {
		if r, ok := env.Checked[raw]; ok && filepath.IsAbs(r) {
			return filepath.Clean(r)
		}
	}
	return realPath(path)
}

// place is an open root directory and a target's name beneath it.
type place struct {
	root *safefs.Root
	rel  string
	path string // the absolute target
}

func (p *place) close() { p.root.Close() }

// openPlace opens the root under which target (absolute, links resolved) is
// reached: the innermost of the session's working directories (WorkDir and
// AdditionalDirs, their links resolved) that holds it, else "/". Every
// lookup below the root refuses symbolic links, and the root itself is
// opened without following any.
func openPlace(env *tool.Env, target string) (*place, error) {
	if target == "/dev" || strings.HasPrefix(target, "/dev/") {
		return nil, fmt.Errorf("%s is under /dev: device files are not read or written by the file tools", target)
	}
	root := "/"
	for _, d := range workRoots(env) {
		if _, ok := safefs.Rel(d, target); ok && len(d) > len(root) {
			root = d
		}
	}
	r, err := safefs.OpenRoot(root)
	if err != nil && root != "/" {
		// The working directory moved or changed under us: fall back to
		// the file system's root (links are still refused below it).
		root = "/"
		r, err = safefs.OpenRoot(root)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", target, err)
	}
	rel, _ := safefs.Rel(root, target)
	return &place{root: r, rel: rel, path: target}, nil
}

// workRoots returns the session's working directories (WorkDir and
// AdditionalDirs) with their links resolved; ones that do not resolve are
// left out.
func workRoots(env *tool.Env) []string {
	if env == nil {
		return nil
	}
	dirs := append([]string{env.WorkDir}, env.AdditionalDirs...)
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		r, err := filepath.EvalSymlinks(d)
		if err == nil && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// openRegularAt opens the place's file for reading if it is a regular file.
// It never blocks on a FIFO (the type is checked on a path-only descriptor
// first, the file is opened non-blocking, and checked again). path is the
// name to report.
func openRegularAt(pl *place, path string) (*os.File, fs.FileInfo, error) {
	pf, err := pl.root.OpenFile(pl.rel, oPath, 0)
	if err != nil {
		return nil, nil, openErr(pl, path, err)
	}
	info, err := pf.Stat()
	pf.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if err := checkRegular(path, info); err != nil {
		return nil, nil, err
	}
	f, err := pl.root.OpenFile(pl.rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, nil, openErr(pl, path, err)
	}
	info, err = f.Stat()
	if err == nil {
		err = checkRegular(path, info)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// errDanglingLink is wrapped by the error for a link to a missing file; it
// is also fs.ErrNotExist.
var errDanglingLink = fmt.Errorf("dangling symbolic link: %w", fs.ErrNotExist)

// openErr explains an open error of the place's file (path is the name
// the model gave, made absolute): a missing file (with a similar name), a
// dangling link, a link met where none may be.
func openErr(pl *place, path string, err error) error {
	if errors.Is(err, safefs.ErrSymlink) {
		if realPath(path) == pl.path {
			// The path resolves now as when it was checked: a dangling
			// link, or a link loop.
			if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
					return fmt.Errorf("%s is a symbolic link to a missing file; create its target first or remove the link: %w", path, errDanglingLink)
				}
			}
			if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
				return notExistHint(path, serr)
			}
		}
		return fmt.Errorf("%s: a symbolic link on the way to %s was created or changed after the path was checked; the file tools do not follow it (%w). Check the path and try again", path, pl.path, safefs.ErrSymlink)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return notExistHint(path, err)
	}
	return fmt.Errorf("open %s: %w", path, err)
}
