package grep

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

// walkConfig configures one parallel walk.
type walkConfig struct {
	// root is the absolute, cleaned directory to walk.
	root string
	// workers is the number of goroutines (at least 1).
	workers int
	// filter decides which entries are skipped.
	filter filter
	// noIgnore turns off .gitignore handling.
	noIgnore bool
	// maxDepth, if > 0, stops descending below that many directory levels
	// under root (files at depth maxDepth are still visited).
	maxDepth int
	// batch is the number of files handed to a worker as one job. Zero
	// visits files on the goroutine that listed their directory.
	batch int
}

// visitFunc is called for every file the walk keeps, concurrently from
// several goroutines. w is the calling worker's scratch state.
type visitFunc func(w *worker, f fileEntry)

// fileEntry is a file the walk keeps: name in the directory dir.
type fileEntry struct {
	dir  *dirJob
	name string
}

// info returns the file's information (not following a symbolic link).
func (f fileEntry) info() (fs.FileInfo, error) { return os.Lstat(f.path()) }

// dirEntry is one entry of a directory listing: its name and type bits.
type dirEntry struct {
	name string
	typ  fs.FileMode
}

// path returns the file's absolute path.
func (f fileEntry) path() string { return joinPath(f.dir.path, f.name) }

// rel returns the file's path relative to the root, with "/" separators.
func (f fileEntry) rel() string { return joinRel(f.dir.rel, f.name) }

// worker is the per-goroutine scratch state of a walk.
type worker struct {
	id  int
	buf []byte // file contents (see readFile)
	low []byte // ASCII-lower-cased copy, for case-insensitive literals
	// dirBuf is the buffer of directory reads, name a file name as a C
	// string.
	dirBuf, name []byte
	// subs are the matches of one line.
	subs [][2]int
	// next is scan's per-literal cache of prefilter positions.
	next []int
	// lines collects the lines of the file being searched.
	lines fileLines
}

type dirJob struct {
	path  string // absolute
	rel   string // relative to root ("" for root)
	depth int
	ign   *ignoreNode

	// fd is the open directory while its files are visited (-1 when it
	// was closed at once, or outside Linux): files are opened relative to
	// it. refs counts the listing and the pending file jobs; the last one
	// closes fd.
	fd   int
	refs atomic.Int32
	// complete is set when the directory's file system reads regular
	// files completely (see readDirectory).
	complete bool
}

// maxOpenDirs bounds the directories a walk keeps open for relative opens;
// past it a directory is closed after listing and its files are opened by
// path.
const maxOpenDirs = 64

type fileJob struct {
	dir   *dirJob
	names []dirEntry
}

type job struct {
	dir   *dirJob
	files *fileJob
}

type walker struct {
	cfg   *walkConfig
	visit visitFunc

	mu      sync.Mutex
	cond    sync.Cond
	stack   []job
	pending int
	done    bool

	openDirs atomic.Int32
}

// walk visits the files under cfg.root in parallel. It returns ctx.Err() if
// the context ended before the walk did; unreadable directories and files
// are skipped silently (like ripgrep with --no-messages).
func walk(ctx context.Context, cfg *walkConfig, visit visitFunc) error {
	if cfg.workers < 1 {
		cfg.workers = 1
	}
	w := &walker{cfg: cfg, visit: visit}
	w.cond.L = &w.mu
	var top *ignoreNode
	if !cfg.noIgnore {
		top = parentIgnores(cfg.root)
	}
	w.push(job{dir: &dirJob{path: cfg.root, ign: top, fd: -1}})
	stop := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.done = true
		dropped := w.stack
		w.stack = nil
		w.mu.Unlock()
		w.cond.Broadcast()
		for _, j := range dropped {
			w.drop(j)
		}
	})
	defer stop()
	var wg sync.WaitGroup
	for i := range cfg.workers {
		wg.Go(func() { w.run(ctx, &worker{id: i}) })
	}
	wg.Wait()
	return ctx.Err()
}

func (w *walker) push(j job) {
	w.mu.Lock()
	done := w.done
	if !done {
		w.stack = append(w.stack, j)
		w.pending++
	}
	w.mu.Unlock()
	if done {
		w.drop(j)
		return
	}
	w.cond.Signal()
}

// drop forgets a job that will not run.
func (w *walker) drop(j job) {
	if j.files != nil {
		w.release(j.files.dir)
	}
}

func (w *walker) run(ctx context.Context, wk *worker) {
	for {
		w.mu.Lock()
		for len(w.stack) == 0 && !w.done {
			w.cond.Wait()
		}
		if w.done {
			w.mu.Unlock()
			return
		}
		j := w.stack[len(w.stack)-1]
		w.stack[len(w.stack)-1] = job{}
		w.stack = w.stack[:len(w.stack)-1]
		w.mu.Unlock()

		switch {
		case ctx.Err() != nil:
			w.drop(j)
		case j.dir != nil:
			w.listDir(ctx, wk, j.dir)
		default:
			w.visitFiles(ctx, wk, j.files)
		}

		w.mu.Lock()
		w.pending--
		if w.pending == 0 {
			w.done = true
			w.cond.Broadcast()
		}
		w.mu.Unlock()
	}
}

func (w *walker) visitFiles(ctx context.Context, wk *worker, fj *fileJob) {
	defer w.release(fj.dir)
	for _, d := range fj.names {
		if ctx.Err() != nil {
			return
		}
		w.visit(wk, fileEntry{dir: fj.dir, name: d.name})
	}
}

// release drops one reference to dj's open directory; the last closes it.
func (w *walker) release(dj *dirJob) {
	if dj.refs.Add(-1) == 0 && dj.fd >= 0 {
		closeDir(dj.fd)
		w.openDirs.Add(-1)
	}
}

func (w *walker) listDir(ctx context.Context, wk *worker, dj *dirJob) {
	keep := w.openDirs.Add(1) <= maxOpenDirs
	fd, entries, complete, err := readDirectory(wk, dj.path, keep)
	if !keep || fd < 0 {
		w.openDirs.Add(-1)
	}
	if err != nil {
		return
	}
	dj.fd = fd
	dj.complete = complete
	dj.refs.Store(1)
	defer w.release(dj)

	ign := dj.ign
	if !w.cfg.noIgnore {
		hasGit, hasGitignore := false, false
		for _, e := range entries {
			switch e.name {
			case ".git":
				hasGit = true
			case ".gitignore":
				hasGitignore = !e.typ.IsDir()
			}
		}
		if hasGit || hasGitignore {
			ign = loadIgnores(dj.path, ign, hasGit, hasGitignore)
		}
	}
	// Subdirectories are pushed first and the files last, so that the
	// files (popped first from the stack) are searched while this
	// directory is still open and warm.
	files := entries[:0]
	for _, e := range entries {
		t := e.typ
		if t&(fs.ModeSymlink|fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice|fs.ModeIrregular) != 0 {
			continue // like ripgrep without --follow: symlinks are not followed
		}
		name := e.name
		isDir := t.IsDir()
		if w.cfg.filter.skip(ign, dj.path, name, isDir) {
			continue
		}
		if isDir {
			if w.cfg.maxDepth > 0 && dj.depth+1 >= w.cfg.maxDepth {
				continue
			}
			w.push(job{dir: &dirJob{path: joinPath(dj.path, name), rel: joinRel(dj.rel, name), depth: dj.depth + 1, ign: ign, fd: -1}})
			continue
		}
		files = append(files, e)
	}
	if w.cfg.batch == 0 {
		dj.refs.Add(1)
		w.visitFiles(ctx, wk, &fileJob{dir: dj, names: files})
		return
	}
	for len(files) > 0 {
		n := min(len(files), w.cfg.batch)
		dj.refs.Add(1)
		w.push(job{files: &fileJob{dir: dj, names: files[:n:n]}})
		files = files[n:]
	}
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// loadIgnores returns the ignore node of dir: its .gitignore and, at a
// repository's top, .git/info/exclude. A repository's top cuts the chain
// to the directories above it.
func loadIgnores(dir string, parent *ignoreNode, hasGit, hasGitignore bool) *ignoreNode {
	n := &ignoreNode{parent: parent}
	if hasGit {
		n.parent = nil
		n.exclude = readIgnoreSet(dir, filepath.Join(dir, ".git", "info", "exclude"))
	}
	if hasGitignore {
		n.gi = readIgnoreSet(dir, filepath.Join(dir, ".gitignore"))
	}
	if n.gi == nil && n.exclude == nil {
		return n.parent
	}
	return n
}

// parentIgnores returns the ignore chain of the directories above root, up
// to the top of root's repository (the first directory holding ".git"), or
// up to the file-system root when there is no repository.
func parentIgnores(root string) *ignoreNode {
	if exists(filepath.Join(root, ".git")) {
		return nil
	}
	var dirs []string
	topHasGit := false
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if exists(filepath.Join(d, ".git")) {
			topHasGit = true
			break
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	var n *ignoreNode
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		n = loadIgnores(d, n, topHasGit && i == len(dirs)-1, isRegular(filepath.Join(d, ".gitignore")))
	}
	return n
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func isRegular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// defaultWorkers is the walk's parallelism when Options.Workers is zero.
func defaultWorkers() int {
	n := runtime.GOMAXPROCS(0)
	if n < 2 {
		n = 2
	}
	return n
}

func quote(s string) string { return strconv.Quote(s) }
