package checkpoint

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The journal: what a Store records goes into one append-only file of its
// own (journal/<random>.log, created at its first recording) instead of a
// file per object, manifest and checkpoint record. Creating a file costs
// far more CPU than appending to an open one (allocating the inode, the
// directory entry; BenchmarkCheckpoint10k, docs/scale.md), and a checkpoint
// before an edit stored three new files (the changed file's object, the
// manifest, the record).
//
// A record is a header line "<type> <key> <length>\n", the length bytes,
// and "\n"; types are 'o' (an object, key its hash), 'm' (a manifest, key
// its hash) and 'r' (a checkpoint record, key its id; the body the Info's
// JSON). Each record is one write(2) to a file opened O_APPEND, so
// another process reading the journal sees whole records followed at
// most by a partial last one, which it ignores (as it ignores the tail
// of a journal whose writer died mid-record: a new Store never appends
// to an existing journal). Bodies are checked as the loose files are —
// objects and manifests against their hash, records by their id.
//
// Loose files (objects/, manifests/, refs/, what earlier versions wrote)
// are still read, and a content already stored loose is not appended
// again. A journal is self-contained: its manifests' objects are in it
// or loose, so [Store.Prune] removes a journal as a whole once none of
// its checkpoints is kept (nor the tip's manifest).
type journal struct {
	mu    sync.Mutex
	path  string // this Store's own journal, "" until the first append
	size  int64
	own   map[string]jloc // type+key → where, in the own journal
	other map[string]jloc // the same for every other journal, as last read
	read  bool            // other was filled at least once
}

// jloc is where a record's body lies.
type jloc struct {
	path   string
	off, n int64
}

const journalDir = "journal"

// jappend appends a record (creating the own journal at first use).
func (s *Store) jappend(typ byte, key string, body []byte) error {
	j := &s.j
	j.mu.Lock()
	defer j.mu.Unlock()
	// The journal is opened for each record (opening an existing file
	// costs a few µs; creating one is what costs), so a Store holds no
	// descriptor between recordings and needs no Close.
	var f *os.File
	if j.path != "" {
		var err error
		if f, err = os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND, 0); errors.Is(err, fs.ErrNotExist) {
			j.path, j.own = "", nil // unpacked by a prune: start a new one
		} else if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	if j.path == "" {
		dir := filepath.Join(s.root, journalDir)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		p := filepath.Join(dir, strconv.FormatInt(s.now().UnixNano(), 36)+"-"+randomID()[:12]+".log")
		var err error
		if f, err = os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		j.path, j.size, j.own = p, 0, map[string]jloc{}
	}
	defer f.Close()
	head := fmt.Appendf(make([]byte, 0, 96), "%c %s %d\n", typ, key, len(body))
	// One writev(2): a whole record, without copying the body.
	total := int64(len(head) + len(body) + 1)
	n, err := unix.Writev(int(f.Fd()), [][]byte{head, body, {'\n'}})
	if err == nil && int64(n) != total {
		err = io.ErrShortWrite
	}
	if err != nil {
		// A partial record ends this journal: the next append starts a new one.
		j.path, j.own = "", nil
		return fmt.Errorf("checkpoint: %w", err)
	}
	j.own[string(typ)+key] = jloc{j.path, j.size + int64(len(head)), int64(len(body))}
	j.size += total
	return nil
}

// jhasOwn reports whether the own journal holds the record.
func (s *Store) jhasOwn(typ byte, key string) bool {
	s.j.mu.Lock()
	defer s.j.mu.Unlock()
	s.j.liveLocked()
	_, ok := s.j.own[string(typ)+key]
	return ok
}

// jfind returns where a record is, reading the other journals again when
// it is not known (another process may have recorded it since).
func (s *Store) jfind(typ byte, key string) (jloc, bool, error) {
	j := &s.j
	j.mu.Lock()
	defer j.mu.Unlock()
	k := string(typ) + key
	if l, ok := j.own[k]; ok {
		return l, true, nil
	}
	if l, ok := j.other[k]; ok {
		return l, true, nil
	}
	if err := s.jreadLocked(); err != nil {
		return jloc{}, false, err
	}
	l, ok := j.other[k]
	return l, ok, nil
}

// jreadLocked indexes every journal but the own one.
func (s *Store) jreadLocked() error {
	j := &s.j
	other := map[string]jloc{}
	err := s.eachJournal(func(p string, recs []jrec) {
		if p == j.path {
			return
		}
		for _, r := range recs {
			other[string(r.typ)+r.key] = r.jloc
		}
	})
	if err != nil {
		return err
	}
	j.other, j.read = other, true
	return nil
}

// jrec is a record's header in a journal.
type jrec struct {
	typ byte
	key string
	jloc
}

// eachJournal calls fn with the records of every journal of the store.
func (s *Store) eachJournal(fn func(path string, recs []jrec)) error {
	dir := filepath.Join(s.root, journalDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		recs, err := readJournal(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // pruned meanwhile
		}
		if err != nil {
			return err
		}
		fn(p, recs)
	}
	return nil
}

// readJournal reads the headers of a journal's whole records.
func readJournal(p string) ([]jrec, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 4096)
	var recs []jrec
	var off int64
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return recs, nil // the end, or a partial header
		}
		typ, rest, ok1 := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		key, ns, ok2 := strings.Cut(rest, " ")
		n, nerr := strconv.ParseInt(ns, 10, 64)
		if !ok1 || !ok2 || len(typ) != 1 || nerr != nil || n < 0 || key == "" {
			return recs, fmt.Errorf("%w: journal %s: bad record header at %d", ErrCorrupt, filepath.Base(p), off)
		}
		body := off + int64(len(line))
		if _, err := br.Discard(int(n)); err != nil {
			return recs, nil // a partial last record
		}
		if b, err := br.ReadByte(); err != nil || b != '\n' {
			if err != nil {
				return recs, nil
			}
			return recs, fmt.Errorf("%w: journal %s: bad record at %d", ErrCorrupt, filepath.Base(p), off)
		}
		recs = append(recs, jrec{typ[0], key, jloc{p, body, n}})
		off = body + n + 1
	}
}

// jbody reads a record's body.
func jbody(l jloc) ([]byte, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, l.n)
	if _, err := f.ReadAt(b, l.off); err != nil {
		return nil, err
	}
	return b, nil
}

// jopen opens a record's body for reading.
func jopen(l jloc) (io.ReadCloser, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, l.off, l.n), f}, nil
}

// endJournal makes the next record start a new journal (the own one was
// unpacked by a prune).
func (s *Store) endJournal() {
	s.j.mu.Lock()
	defer s.j.mu.Unlock()
	s.j.path, s.j.own = "", nil
}

// jknown reports whether a record is known: in the own journal, or in
// the other journals as last read (they are read once for it).
func (s *Store) jknown(typ byte, key string) bool {
	j := &s.j
	j.mu.Lock()
	defer j.mu.Unlock()
	k := string(typ) + key
	if _, ok := j.own[k]; ok {
		return true
	}
	if !j.read {
		_ = s.jreadLocked() // an unreadable journal does not stop a recording
	}
	_, ok := j.other[k]
	return ok
}

// ownJournal returns the path of the Store's open journal ("" if none).
func (s *Store) ownJournal() string {
	s.j.mu.Lock()
	defer s.j.mu.Unlock()
	return s.j.path
}

// liveLocked drops the own journal when a prune of another process
// unpacked and removed it (what it kept is loose now): the next record
// starts a new journal, and nothing is taken as stored in the old one.
// (A record appended in the moment between this check and the prune's
// removal would be lost with the journal; a prune leaves journals
// modified within the hour alone, and a Store that records writes its
// own at each checkpoint.)
func (j *journal) liveLocked() {
	if j.path == "" {
		return
	}
	if _, err := os.Lstat(j.path); errors.Is(err, fs.ErrNotExist) {
		j.path, j.own = "", nil
	}
}
