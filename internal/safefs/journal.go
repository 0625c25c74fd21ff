package safefs

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Journal records the temporary files of [Root.WriteFile] while they exist,
// one journal file per process in a shared directory, so that the
// temporary files a crashed process left behind are removed by the next
// process that opens a journal there. A process holds an exclusive lock on
// its own journal file; a journal whose lock can be taken belongs to a
// process that has ended. A Journal is safe for concurrent use.
type Journal struct {
	mu       sync.Mutex
	f        *os.File
	inflight map[string]bool
}

const journalExt = ".journal"

// OpenJournal sweeps dir (created if missing) — removing the temporary
// files listed by journals of ended processes, and those journals — then
// starts this process's journal there. It returns the temporary files it
// removed.
func OpenJournal(dir string) (*Journal, []string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("safefs: journal directory: %w", err)
	}
	removed, err := Sweep(dir)
	if err != nil {
		return nil, removed, err
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name := filepath.Join(dir, strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(rnd[:])+journalExt)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, removed, fmt.Errorf("safefs: journal: %w", err)
	}
	if ok, err := tryLock(f); !ok && !errors.Is(err, errors.ErrUnsupported) {
		f.Close()
		os.Remove(name)
		return nil, removed, fmt.Errorf("safefs: lock the journal %s: %v", name, err)
	}
	return &Journal{f: f, inflight: make(map[string]bool)}, removed, nil
}

// Sweep removes the temporary files listed by the journals in dir whose
// process has ended (their lock is free), and those journals. Only files
// whose name is a temporary name ([IsTempName]) and that are regular files
// are removed. It returns the removed files.
func Sweep(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("safefs: sweep %s: %w", dir, err)
	}
	var removed []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), journalExt) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		ok, _ := tryLock(f)
		if !ok { // its process is alive
			f.Close()
			continue
		}
		for _, t := range pending(f) {
			if fi, err := os.Lstat(t); err == nil && fi.Mode().IsRegular() && IsTempName(filepath.Base(t)) {
				if os.Remove(t) == nil {
					removed = append(removed, t)
				}
			}
		}
		os.Remove(p)
		f.Close()
	}
	return removed, nil
}

// pending returns the temporary files a journal lists as begun and not
// ended.
func pending(f *os.File) []string {
	var order []string
	open := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 2 {
			continue
		}
		p, err := strconv.Unquote(line[1:])
		if err != nil || !filepath.IsAbs(p) {
			continue
		}
		switch line[0] {
		case '+':
			if !open[p] {
				order = append(order, p)
			}
			open[p] = true
		case '-':
			open[p] = false
		}
	}
	var out []string
	for _, p := range order {
		if open[p] {
			out = append(out, p)
		}
	}
	return out
}

func (j *Journal) begin(p string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.WriteString("+" + strconv.Quote(p) + "\n"); err != nil {
		return fmt.Errorf("safefs: record %s in the journal: %w", p, err)
	}
	j.inflight[p] = true
	return nil
}

func (j *Journal) end(p string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.inflight, p)
	if len(j.inflight) == 0 {
		// Nothing in flight: start over so the journal stays small.
		if j.f.Truncate(0) == nil {
			if _, err := j.f.Seek(0, 0); err == nil {
				return
			}
		}
	}
	_, _ = j.f.WriteString("-" + strconv.Quote(p) + "\n")
}

// Close ends the journal and removes its file. Temporary files still in
// flight stay listed until then; Close is for the end of the process.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	name := j.f.Name()
	err := j.f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	return err
}
