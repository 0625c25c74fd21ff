package checkpoint

import (
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
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-dev/gantry/internal/ignorefile"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"golang.org/x/sys/unix"
)

// racyWindow: a file modified this close to (or after) the recording of the
// previous tree is hashed again even if its stat is unchanged, because
// file-system timestamps are coarser than the writes they stamp.
const racyWindow = 2 * time.Second

// scanWorkers bounds the directories listed and stat-ed at once;
// directories are listed in parallel only once parallelAfter entries
// were listed — a small project is listed by one goroutine, since the
// hand-offs cost more CPU than they save there (BenchmarkCheckpoint10k
// and the small-project cases), while a large one is listed sooner.
const (
	scanWorkers   = 4
	parallelAfter = 2_000
)

// scanner walks the project once, in two phases: the directories are
// listed and their entries stat-ed in parallel (a tree of dirNodes), then
// the tree is recorded in walk order — caps, the stat cache and hashing —
// by one goroutine, so the result does not depend on scheduling.
type scanner struct {
	s     *Store
	ctx   context.Context
	prev  *manifest
	racy  int64 // files whose mtime is at or after this are hashed again
	out   *manifest
	total int64
	full  bool // the file cap was reached
	skip  string

	cursor int // into prev.entries: the next one previous may return

	// sameIgnore: the ignore files are those of prev's scan, unchanged
	// by their stat, so a path prev recorded is not ignored now either.
	sameIgnore bool

	sem  chan struct{} // worker slots of the listing phase
	seen atomic.Int64  // entries listed so far (the listing stops past the file cap)
	wg   sync.WaitGroup
}

// dirNode is one listed directory.
type dirNode struct {
	rel   string
	parts []string
	err   string // the directory could not be listed
	items []item // by name

	// m matches the directory's entries (nil: no patterns apply); a
	// non-directory entry is matched in the record phase, where the
	// previous tree can spare it (scanner.sameIgnore).
	m gitignore.Matcher
	// gitignore: the directory held a .gitignore when listed.
	gitignore bool
}

// item is one listed entry.
type item struct {
	name, path string
	st         fileStat
	err        string // stat or readlink failed
	ignored    bool
	match      bool     // not matched yet: a non-directory with patterns to match
	target     string   // a link's
	child      *dirNode // a directory's (nil past the file cap)
}

// scan records the project's tree, storing the content of new or changed
// files; prev (may be nil) is the stat cache.
func (s *Store) scan(ctx context.Context, prev *manifest) (*manifest, error) {
	sc := &scanner{s: s, ctx: ctx, prev: prev, out: &manifest{taken: s.now()}, sem: make(chan struct{}, scanWorkers)}
	if prev != nil {
		// Most trees are the previous one give or take a few paths: no
		// growth of the entry list as it is filled.
		sc.out.entries = make([]Entry, 0, len(prev.entries)+len(prev.entries)/8+16)
		sc.racy = prev.taken.Add(-racyWindow).UnixNano()
	}
	// The store itself, when it lies inside the project, is not recorded.
	if rel, err := filepath.Rel(s.dir, s.root); err == nil && filepath.IsLocal(rel) {
		sc.skip = filepath.ToSlash(rel)
	}
	fd, err := unix.Open(s.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: open %s: %w", s.dir, err)
	}
	pats, exclude := readExclude(filepath.Join(s.dir, ".git", "info", "exclude"))
	root := &dirNode{}
	sc.list(fd, root, pats)
	sc.wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sc.out.ignoreSig = sc.ignoreSignature(root, exclude)
	sc.sameIgnore = prev != nil && sc.out.ignoreSig != "" && sc.out.ignoreSig == prev.ignoreSig
	if err := sc.record(root); err != nil {
		return nil, err
	}
	return sc.out, nil
}

// list lists directory fd (which it closes) into n, and its
// subdirectories, each in a goroutine while a worker slot is free.
func (sc *scanner) list(fd int, n *dirNode, pats []gitignore.Pattern) {
	dir := os.NewFile(uintptr(fd), n.rel)
	defer dir.Close()
	if sc.ctx.Err() != nil {
		return
	}
	names, err := dir.Readdirnames(-1)
	if err != nil {
		n.err = errText(err)
		return
	}
	slices.Sort(names)
	if slices.Contains(names, ".gitignore") {
		n.gitignore = true
		pats = append(pats[:len(pats):len(pats)], readIgnoreAt(fd, n.parts)...)
	}
	var m gitignore.Matcher
	if len(pats) > 0 {
		m = gitignore.NewMatcher(pats)
		n.m = m
	}
	n.items = make([]item, 0, len(names))
	for _, name := range names {
		p := name
		if n.rel != "" {
			p = n.rel + "/" + name
		}
		if name == ".git" || p == sc.skip {
			continue // the project's repository and the store are never recorded
		}
		n.items = append(n.items, item{name: name, path: p})
		it := &n.items[len(n.items)-1]
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if err == unix.ENOENT {
				n.items = n.items[:len(n.items)-1]
			} else {
				it.err = err.Error()
			}
			continue
		}
		it.st = statOf(&st)
		typ := it.st.Mode & unix.S_IFMT
		if typ != unix.S_IFDIR {
			// Matched when recorded; a link's target is read either way.
			it.match = m != nil
		}
		switch typ {
		case unix.S_IFLNK:
			if it.target, err = readlinkAt(fd, name); err != nil {
				it.err = err.Error()
			}
		case unix.S_IFDIR:
			parts := append(n.parts[:len(n.parts):len(n.parts)], name)
			if m != nil && m.Match(parts, true) {
				it.ignored = true
				continue
			}
			if sc.seen.Load() > int64(sc.s.opts.MaxFiles) {
				continue // past the file cap: not listed (recorded as over it)
			}
			cfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				it.err = err.Error()
				continue
			}
			it.child = &dirNode{rel: p, parts: parts}
			if sc.seen.Load() < parallelAfter {
				sc.list(cfd, it.child, pats)
				continue
			}
			select {
			case sc.sem <- struct{}{}:
				sc.wg.Add(1)
				go func(c *dirNode) {
					defer func() { <-sc.sem; sc.wg.Done() }()
					sc.list(cfd, c, pats)
				}(it.child)
			default:
				sc.list(cfd, it.child, pats)
			}
		}
	}
	sc.seen.Add(int64(len(n.items)))
}

// record adds a listed directory's entries to the manifest in walk order.
func (sc *scanner) record(n *dirNode) error {
	if n.err != "" {
		if n.rel == "" {
			return fmt.Errorf("checkpoint: list %s: %s", sc.s.dir, n.err)
		}
		sc.notCovered(n.rel, ReasonUnreadable+": "+n.err)
		return nil
	}
	for i := range n.items {
		it := &n.items[i]
		if it.match && !sc.full {
			it.ignored = sc.ignored(n, it)
		}
		switch {
		case sc.full:
			sc.notCovered(it.path, ReasonFileCap)
			continue
		case it.ignored:
			sc.notCovered(it.path, ReasonIgnored)
			continue
		case it.err != "":
			sc.notCovered(it.path, ReasonUnreadable+": "+it.err)
			continue
		case len(sc.out.entries) >= sc.s.opts.MaxFiles:
			sc.full = true
			sc.notCovered(it.path, ReasonFileCap)
			continue
		}
		mode := modeOf(it.st.Mode)
		switch it.st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			sc.out.entries = append(sc.out.entries, Entry{Path: it.path, Type: TypeDir, Mode: mode})
			if it.child == nil {
				sc.full = true
				continue
			}
			if err := sc.record(it.child); err != nil {
				return err
			}
		case unix.S_IFLNK:
			sc.out.entries = append(sc.out.entries, Entry{Path: it.path, Type: TypeSymlink, Mode: mode, Target: it.target})
		case unix.S_IFREG:
			if err := sc.file(n.rel, it.name, it.path, &it.st); err != nil {
				return err
			}
		default:
			sc.notCovered(it.path, ReasonSpecial)
		}
	}
	return nil
}

// ignored matches a non-directory entry of n, unless the ignore files are
// those of the previous scan and it recorded the path (then it was not
// ignored, and is not now).
func (sc *scanner) ignored(n *dirNode, it *item) bool {
	if sc.sameIgnore {
		if old := sc.peek(it.path); old != nil && old.Type != TypeDir {
			return false
		}
	}
	parts := make([]string, len(n.parts)+1)
	copy(parts, n.parts)
	parts[len(n.parts)] = it.name
	return n.m.Match(parts, false)
}

// ignoreSignature identifies the ignore files a scan read by their stat:
// .git/info/exclude's (exclude) and every listed .gitignore's. It is ""
// when one cannot be told from a later version by its stat — unreadable,
// gone while listed, or changed within the racy window of the scan
// (its content may be newer than what was read).
func (sc *scanner) ignoreSignature(root *dirNode, exclude *fileStat) string {
	horizon := sc.out.taken.Add(-racyWindow).UnixNano()
	var b strings.Builder
	ok := true
	add := func(rel string, st *fileStat) {
		if st.MTime >= horizon { // as a file's stat cache: scanner.racy
			ok = false
		}
		fmt.Fprintf(&b, "%s\x00%d:%d:%d:%d:%d\n", rel, st.Mode, st.Size, st.Ino, st.MTime, st.CTime)
	}
	if exclude != nil {
		add(".git/info/exclude", exclude)
	}
	var walk func(n *dirNode)
	walk = func(n *dirNode) {
		if !ok || n == nil {
			return
		}
		if n.gitignore {
			i, found := slices.BinarySearchFunc(n.items, ".gitignore", func(it item, name string) int {
				return strings.Compare(it.name, name)
			})
			if !found || n.items[i].err != "" {
				ok = false
				return
			}
			add(n.rel+"/.gitignore", &n.items[i].st)
		}
		for i := range n.items {
			walk(n.items[i].child)
		}
	}
	walk(root)
	if !ok {
		return ""
	}
	return b.String() + "."
}

// peek is the entry of the previous tree at path p if the cursor reaches
// it in tree order (nil otherwise); it moves the cursor up to p, not past
// it, so previous(p) still returns it.
func (sc *scanner) peek(p string) *Entry {
	if sc.prev == nil {
		return nil
	}
	es := sc.prev.entries
	i := sc.cursor
	for i < len(es) && treeLess(es[i].Path, p) {
		i++
	}
	sc.cursor = i
	if i < len(es) && es[i].Path == p {
		return &es[i]
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
func (sc *scanner) file(dirRel, name, p string, st *fileStat) error {
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
	if old := sc.previous(p); old != nil && old.Type == TypeFile && old.Size == e.Size && old.MTime == e.MTime &&
		old.CTime == e.CTime && old.Ino == e.Ino && old.Mode == e.Mode && e.MTime < sc.racy {
		e.Hash = old.Hash
		sc.total += size
		sc.out.entries = append(sc.out.entries, e)
		return nil
	}
	// Opened beneath the project without following any link: the path
	// was a regular file when listed, and a link put there since (or in
	// place of a directory above it) is not read through.
	fd, err := openBeneath(sc.s.dir, p)
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
	now := statOf(&fst)
	e = statEntry(p, &now)
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

// fileStat is the part of a stat a scan keeps (a listed directory holds
// one per entry: 40 bytes instead of unix.Stat_t's 144).
type fileStat struct {
	Mode         uint32
	Size         int64
	Ino          uint64
	MTime, CTime int64 // nanoseconds
}

func statOf(st *unix.Stat_t) fileStat {
	return fileStat{Mode: st.Mode, Size: st.Size, Ino: st.Ino,
		MTime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, CTime: st.Ctim.Sec*1e9 + st.Ctim.Nsec}
}

// statEntry is a file entry with the stat fields of st.
func statEntry(p string, st *fileStat) Entry {
	return Entry{
		Path: p, Type: TypeFile, Mode: modeOf(st.Mode), Size: st.Size, Ino: st.Ino,
		MTime: st.MTime, CTime: st.CTime,
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
	return ignorefile.Read(f, domain)
}

// readExclude parses the project's .git/info/exclude and returns its
// stat (nil if it could not be opened).
func readExclude(file string) ([]gitignore.Pattern, *fileStat) {
	fd, err := unix.Open(file, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil
	}
	f := os.NewFile(uintptr(fd), file)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil
	}
	fs := statOf(&st)
	return ignorefile.Read(f, nil), &fs
}

func errText(err error) string {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// openBeneath opens the file rel (slash-separated) beneath dir for
// reading, refusing every symbolic link on the way (openat2 with
// RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH, else a walk of O_NOFOLLOW opens).
func openBeneath(dir, rel string) (int, error) {
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(dfd)
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH}
	fd, err := unix.Openat2(dfd, rel, &how)
	if err != unix.ENOSYS && err != unix.EPERM {
		return fd, err
	}
	cur := dfd
	els := strings.Split(rel, "/")
	for i, el := range els {
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i < len(els)-1 {
			flags |= unix.O_DIRECTORY
		} else {
			flags |= unix.O_NONBLOCK
		}
		next, err := unix.Openat(cur, el, flags, 0)
		if cur != dfd {
			unix.Close(cur)
		}
		if err != nil {
			return -1, err
		}
		cur = next
	}
	return cur, nil
}

// previous returns the entry of path p in the previous tree, or nil. The
// record phase asks for paths in the order the trees are stored in
// (depth first, names sorted: the order of [treeLess]), so a cursor moving
// forward finds them without an index; a path the cursor does not find
// is looked up in the previous tree's index.
func (sc *scanner) previous(p string) *Entry {
	if sc.prev == nil {
		return nil
	}
	es := sc.prev.entries
	i := sc.cursor
	for i < len(es) && treeLess(es[i].Path, p) {
		i++
	}
	if i < len(es) && es[i].Path == p {
		sc.cursor = i + 1
		return &es[i]
	}
	sc.cursor = i
	// A new path, or one asked out of tree order: the index decides (it is
	// built only then).
	return sc.prev.lookup(p)
}

// treeLess orders paths as a depth-first walk with sorted names records
// them: byte order, with '/' before every other byte (a directory's
// entries right after it, before its next sibling).
func treeLess(a, b string) bool {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x == '/' {
			return true
		}
		if y == '/' {
			return false
		}
		return x < y
	}
	return len(a) < len(b)
}
