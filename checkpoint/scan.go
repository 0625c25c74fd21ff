package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"golang.org/x/sys/unix"
)

// racyWindow: a file modified this close to (or after) the recording of the
// previous tree is hashed again even if its stat is unchanged, because
// file-system timestamps are coarser than the writes they stamp.
const racyWindow = 2 * time.Second

// maxIgnoreFile bounds a .gitignore read.
const maxIgnoreFile = 1 << 20

// scanner walks the project once.
type scanner struct {
	s     *Store
	ctx   context.Context
	prev  *manifest
	racy  int64 // files whose mtime is at or after this are hashed again
	out   *manifest
	total int64
	full  bool // the file cap was reached
	skip  string
}

// scan records the project's tree, storing the content of new or changed
// files; prev (may be nil) is the stat cache.
func (s *Store) scan(ctx context.Context, prev *manifest) (*manifest, error) {
	sc := &scanner{s: s, ctx: ctx, prev: prev, out: &manifest{taken: s.now()}}
	if prev != nil {
		sc.racy = prev.taken.Add(-racyWindow).UnixNano()
	}
	// The store itself, when it lies inside the project, is not recorded.
	if rel, err := filepath.Rel(s.dir, s.root); err == nil && filepath.IsLocal(rel) {
		sc.skip = filepath.ToSlash(rel)
	}
	var pats []gitignore.Pattern
	pats = append(pats, readIgnore(filepath.Join(s.dir, ".git", "info", "exclude"), nil)...)
	if err := sc.walk(unix.AT_FDCWD, "", nil, pats); err != nil {
		return nil, err
	}
	return sc.out, nil
}

// walk records directory rel (split into parts) and what it holds. The
// directory is opened relative to its parent's descriptor without following
// links, and its entries are stat-ed relative to its own (one path
// component each, no link followed).
func (sc *scanner) walk(parent int, rel string, parts []string, pats []gitignore.Pattern) error {
	if err := sc.ctx.Err(); err != nil {
		return err
	}
	name := sc.s.dir
	if rel != "" {
		name = parts[len(parts)-1]
	}
	fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if rel == "" {
			return fmt.Errorf("checkpoint: open %s: %w", sc.s.dir, err)
		}
		sc.notCovered(rel, ReasonUnreadable+": "+err.Error())
		return nil
	}
	dir := os.NewFile(uintptr(fd), rel)
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		sc.notCovered(rel, ReasonUnreadable+": "+errText(err))
		return nil
	}
	slices.Sort(names)
	if slices.Contains(names, ".gitignore") {
		pats = append(pats[:len(pats):len(pats)], readIgnoreAt(fd, parts)...)
	}
	var m gitignore.Matcher
	if len(pats) > 0 {
		m = gitignore.NewMatcher(pats)
	}
	var st unix.Stat_t
	for _, name := range names {
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		if name == ".git" || p == sc.skip {
			continue // the project's repository and the store are never recorded
		}
		if sc.full {
			sc.notCovered(p, ReasonFileCap)
			continue
		}
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if err != unix.ENOENT {
				sc.notCovered(p, ReasonUnreadable+": "+err.Error())
			}
			continue
		}
		typ := st.Mode & unix.S_IFMT
		child := append(parts[:len(parts):len(parts)], name)
		if m != nil && m.Match(child, typ == unix.S_IFDIR) {
			sc.notCovered(p, ReasonIgnored)
			continue
		}
		if len(sc.out.entries) >= sc.s.opts.MaxFiles {
			sc.full = true
			sc.notCovered(p, ReasonFileCap)
			continue
		}
		mode := modeOf(st.Mode)
		switch typ {
		case unix.S_IFDIR:
			sc.out.entries = append(sc.out.entries, Entry{Path: p, Type: TypeDir, Mode: mode})
			if err := sc.walk(fd, p, child, pats); err != nil {
				return err
			}
		case unix.S_IFLNK:
			target, err := readlinkAt(fd, name)
			if err != nil {
				sc.notCovered(p, ReasonUnreadable+": "+err.Error())
				continue
			}
			sc.out.entries = append(sc.out.entries, Entry{Path: p, Type: TypeSymlink, Mode: mode, Target: target})
		case unix.S_IFREG:
			if err := sc.file(fd, name, p, &st); err != nil {
				return err
			}
		default:
			sc.notCovered(p, ReasonSpecial)
		}
	}
	return nil
}

// modeOf keeps the bits a rewind restores.
func modeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

func readlinkAt(dirfd int, name string) (string, error) {
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		k, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if k < n {
			return string(buf[:k]), nil
		}
	}
}

// file records one regular file, reading it only if its stat changed.
func (sc *scanner) file(dirfd int, name, p string, st *unix.Stat_t) error {
	size := st.Size
	if size > sc.s.opts.MaxFileSize {
		sc.notCovered(p, fmt.Sprintf("%s (%d bytes)", ReasonTooLarge, size))
		return nil
	}
	if sc.total+size > sc.s.opts.MaxTotalSize {
		sc.notCovered(p, ReasonTotalCap)
		return nil
	}
	e := statEntry(p, st)
	if old := sc.prev.lookup(p); old != nil && old.Type == TypeFile && old.Size == e.Size && old.MTime == e.MTime &&
		old.CTime == e.CTime && old.Ino == e.Ino && old.Mode == e.Mode && e.MTime < sc.racy {
		e.Hash = old.Hash
		sc.total += size
		sc.out.entries = append(sc.out.entries, e)
		return nil
	}
	// Opened without following a link: the path was a regular file when
	// listed, and a link put there since is not read through.
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if err != unix.ENOENT {
			sc.notCovered(p, ReasonUnreadable+": "+err.Error())
		}
		return nil
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil || fst.Mode&unix.S_IFMT != unix.S_IFREG || fst.Size > sc.s.opts.MaxFileSize {
		sc.notCovered(p, ReasonUnreadable+": changed while it was read")
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, sc.s.opts.MaxFileSize+1))
	if err != nil || int64(len(data)) > sc.s.opts.MaxFileSize {
		sc.notCovered(p, ReasonUnreadable+": changed while it was read")
		return nil
	}
	sum := sha256.Sum256(data)
	e = statEntry(p, &fst)
	e.Size = int64(len(data))
	e.Hash = hex.EncodeToString(sum[:])
	if err := sc.s.putObject(e.Hash, data); err != nil {
		return err
	}
	sc.total += e.Size
	sc.out.entries = append(sc.out.entries, e)
	return nil
}

func (sc *scanner) notCovered(p, reason string) {
	sc.out.notCovered = append(sc.out.notCovered, NotCovered{Path: p, Reason: reason})
}

// statEntry is a file entry with the stat fields of st.
func statEntry(p string, st *unix.Stat_t) Entry {
	return Entry{
		Path: p, Type: TypeFile, Mode: modeOf(st.Mode), Size: st.Size, Ino: st.Ino,
		MTime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, CTime: st.Ctim.Sec*1e9 + st.Ctim.Nsec,
	}
}

// readIgnoreAt parses the .gitignore of directory dirfd, whose patterns
// apply below domain.
func readIgnoreAt(dirfd int, domain []string) []gitignore.Pattern {
	fd, err := unix.Openat(dirfd, ".gitignore", unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), ".gitignore")
	defer f.Close()
	return parseIgnore(f, domain)
}

// readIgnore parses a gitignore-syntax file whose patterns apply below
// domain.
func readIgnore(file string, domain []string) []gitignore.Pattern {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	return parseIgnore(f, domain)
}

func parseIgnore(f *os.File, domain []string) []gitignore.Pattern {
	data, _ := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	var out []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, gitignore.ParsePattern(l, domain))
	}
	return out
}

func errText(err error) string {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}
