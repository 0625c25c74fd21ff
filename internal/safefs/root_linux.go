//go:build linux

package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// OpenRoot opens dir as a root. dir must be absolute and contain no symbolic
// link (resolve it first): it is opened without following any.
func OpenRoot(dir string) (*Root, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("safefs: root %q is not absolute", dir)
	}
	dir = filepath.Clean(dir)
	rel, err := checkName(strings.TrimPrefix(dir, "/"))
	if err != nil {
		return nil, fmt.Errorf("safefs: root %w", err)
	}
	slash, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: "/", Err: err}
	}
	defer unix.Close(slash)
	fd, err := openBeneath(slash, rel, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, pathErr("open", dir, err)
	}
	return &Root{root: os.NewFile(uintptr(fd), dir), name: dir}, nil
}

func (r *Root) fd() int { return int(r.root.Fd()) }

// OpenFile opens name beneath r with flag (os.O_* flags) and, when creating,
// perm. No component of name, the last included, may be a symbolic link.
func (r *Root) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	n, err := checkName(name)
	if err != nil {
		return nil, err
	}
	fd, err := openBeneath(r.fd(), n, flag, uint32(perm.Perm()))
	if err != nil {
		return nil, pathErr("open", r.Path(n), err)
	}
	return os.NewFile(uintptr(fd), r.Path(n)), nil
}

// MkdirAll creates name and the missing directories above it beneath r
// (each with perm before the umask). An existing component that is a
// symbolic link or not a directory is an error.
func (r *Root) MkdirAll(name string, perm fs.FileMode) error {
	n, err := checkName(name)
	if err != nil {
		return err
	}
	if n == "." {
		return nil
	}
	cur, own := r.fd(), false
	defer func() {
		if own {
			unix.Close(cur)
		}
	}()
	done := ""
	for _, el := range strings.Split(n, "/") {
		done = path.Join(done, el)
		err := unix.Mkdirat(cur, el, uint32(perm.Perm()))
		if err != nil && err != unix.EEXIST {
			return pathErr("mkdir", r.Path(done), err)
		}
		fd, err := unix.Openat(cur, el, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return pathErr("mkdir", r.Path(done), linkCause(cur, el, err))
		}
		if own {
			unix.Close(cur)
		}
		cur, own = fd, true
	}
	return nil
}

// WriteFile replaces (or creates) name beneath r with data, atomically: a
// temporary file created in the parent directory (opened without following
// links), written, synced, given perm exactly (no umask), renamed over name
// relative to that directory's descriptor, and the directory synced (best
// effort). The parent directory must exist. On failure the temporary file
// is removed and name is untouched. It returns the written file's info.
func (r *Root) WriteFile(name string, data []byte, perm fs.FileMode, opts WriteOptions) (_ fs.FileInfo, err error) {
	n, err := checkName(name)
	if err != nil {
		return nil, err
	}
	if n == "." {
		return nil, fmt.Errorf("safefs: %s: cannot replace the root", r.name)
	}
	dir, base := path.Split(n)
	dfd, err := openBeneath(r.fd(), path.Clean("./"+dir), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, pathErr("open", r.Path(dir), err)
	}
	defer unix.Close(dfd)

	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	tmp := tempName(base, hex.EncodeToString(rnd[:]))
	tmpPath := r.Path(path.Join(dir, tmp))
	if opts.Journal != nil {
		if err := opts.Journal.begin(tmpPath); err != nil {
			return nil, err
		}
		defer opts.Journal.end(tmpPath)
	}
	tfd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, pathErr("create a temporary file for", r.Path(n), err)
	}
	f := os.NewFile(uintptr(tfd), tmpPath)
	defer func() {
		if err != nil {
			f.Close()
			_ = unix.Unlinkat(dfd, tmp, 0)
		}
	}()
	info, err := fillTemp(f, r.Path(n), data, perm, opts.Wrap)
	if err != nil {
		return nil, err
	}
	if err := unix.Renameat(dfd, tmp, dfd, base); err != nil {
		return nil, pathErr("replace", r.Path(n), err)
	}
	_ = unix.Fsync(dfd) // best effort: not every file system syncs directories
	return renamed{info, base}, nil
}

// openat2 support: 0 unknown, 1 available, 2 missing (fall back to the walk).
var openat2State atomic.Int32

// openBeneath opens the relative, checked name beneath dirfd without
// following any symbolic link and without leaving dirfd.
func openBeneath(dirfd int, name string, flag int, perm uint32) (int, error) {
	if openat2State.Load() != 2 {
		how := unix.OpenHow{
			Flags:   uint64(flag | unix.O_CLOEXEC | unix.O_NOFOLLOW),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS,
		}
		if flag&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
			how.Mode = uint64(perm)
		}
		for try := 0; ; try++ {
			fd, err := unix.Openat2(dirfd, name, &how)
			switch {
			case err == unix.EAGAIN && try < 16:
				continue // a concurrent rename elsewhere on the system: retry
			case err == unix.ENOSYS:
				openat2State.Store(2)
			default:
				openat2State.Store(1)
				if err != nil {
					err = linkCause(dirfd, name, err)
				}
				return fd, err
			}
			break
		}
	}
	return walkOpen(dirfd, name, flag, perm)
}

// walkOpen is openBeneath without openat2: one component at a time, each
// opened with O_NOFOLLOW relative to the previous one.
func walkOpen(dirfd int, name string, flag int, perm uint32) (int, error) {
	els := strings.Split(name, "/")
	cur, own := dirfd, false
	defer func() {
		if own {
			unix.Close(cur)
		}
	}()
	for _, el := range els[:len(els)-1] {
		switch el {
		case "", ".":
			continue
		case "..":
			return -1, unix.EXDEV
		}
		fd, err := unix.Openat(cur, el, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, linkCause(cur, el, err)
		}
		if own {
			unix.Close(cur)
		}
		cur, own = fd, true
	}
	last := els[len(els)-1]
	if last == ".." {
		return -1, unix.EXDEV
	}
	if last == "" {
		last = "."
	}
	fd, err := unix.Openat(cur, last, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return -1, linkCause(cur, last, err)
	}
	if flag&unix.O_PATH != 0 {
		// O_PATH|O_NOFOLLOW opens a link itself rather than failing.
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd)
			return -1, ErrSymlink
		}
	}
	return fd, nil
}

// linkCause turns the error of opening el beneath dirfd into ErrSymlink when
// el (or, for openat2, some component) is a symbolic link.
func linkCause(dirfd int, el string, err error) error {
	if err == unix.ELOOP {
		return ErrSymlink
	}
	if err == unix.ENOTDIR {
		// O_DIRECTORY|O_NOFOLLOW on a link reports "not a directory".
		var st unix.Stat_t
		if unix.Fstatat(dirfd, el, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return ErrSymlink
		}
	}
	return err
}

func pathErr(op, p string, err error) error {
	if errors.Is(err, ErrSymlink) {
		return fmt.Errorf("%s %s: %w; symbolic links are not followed here (the path must be the one that was checked)", op, p, ErrSymlink)
	}
	if err == unix.EXDEV {
		return fmt.Errorf("%s %s: %w", op, p, ErrEscape)
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}
