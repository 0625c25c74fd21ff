// Package session stores agent transcripts as append-only JSONL files, one
// record per line, and supports resuming a session by id, continuing the
// latest session of a directory, and forking.
//
// Files live under <home>/projects/<escaped-cwd>/<session-id>.jsonl, where
// home is $GANTRY_HOME or ~/.gantry (see [DefaultHome]) and the escaped cwd
// replaces every character outside [A-Za-z0-9] with '-' (as Claude Code
// does). A crash can leave a torn last line; loading ignores it and the next
// append starts on a fresh line.
//
// The package stores messages as raw JSON so that it depends on no other
// Gantry package; the agent encodes its llm messages into [Record.Message].
package transcript

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/home"
)

// Record types.
const (
	TypeUser      = "user"
	TypeAssistant = "assistant"
	TypeSystem    = "system"  // system events (init, errors, stop reasons)
	TypeSummary   = "summary" // a compaction summary replacing earlier turns
)

// Record is one line of a transcript.
type Record struct {
	Type       string    `json:"type"`
	UUID       string    `json:"uuid"`
	ParentUUID string    `json:"parentUuid,omitempty"`
	SessionID  string    `json:"sessionId"`
	Timestamp  time.Time `json:"timestamp"`
	CWD        string    `json:"cwd,omitempty"`
	// Message is the conversation message (user, assistant) as JSON.
	Message json.RawMessage `json:"message,omitempty"`
	// Subtype and Data describe system records ("init", "result", …).
	Subtype string          `json:"subtype,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	// ForkedFrom names the session a forked record was copied from.
	ForkedFrom string `json:"forkedFrom,omitempty"`
}

// ErrNotFound is returned when a session does not exist.
var ErrNotFound = errors.New("session not found")

// DefaultHome returns the Gantry home as [settings.GantryHome] finds it
// ($GANTRY_HOME, else $HOME/.gantry), or an error when there is none.
// getenv is usually os.Getenv.
func DefaultHome(getenv func(string) string) (string, error) {
	h := home.Dir(getenv, "")
	if h == "" {
		return "", errors.New("session: no Gantry home: neither $GANTRY_HOME nor $HOME is set")
	}
	return h, nil
}

// Store is a directory of transcripts. It is safe for concurrent use; each
// [Transcript] serialises its own appends.
type Store struct {
	home string
	// Now is the clock of record timestamps (nil = time.Now).
	Now func() time.Time
	// NewID makes session ids and record uuids (nil = [NewUUID]).
	NewID func() string
	// Set Now and NewID before the store is first used.
}

// NewStore returns a store rooted at home (see [DefaultHome]) with the
// default clock and ids.
func NewStore(home string) *Store { return &Store{home: home} }

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Store) newID() string {
	if s.NewID != nil {
		return s.NewID()
	}
	return NewUUID()
}

// Home returns the store's root directory.
func (s *Store) Home() string { return s.home }

var unsafeChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9]`) }) // compiled on first use, not at init

// Dir returns the directory holding the transcripts of sessions run in cwd.
func (s *Store) Dir(cwd string) string {
	return filepath.Join(s.home, "projects", unsafeChars().ReplaceAllString(filepath.Clean(cwd), "-"))
}

// Path returns the transcript path of session id in cwd.
func (s *Store) Path(cwd, id string) string { return filepath.Join(s.Dir(cwd), id+".jsonl") }

// validID is compiled on first use, not at init; its length bound (128) is
// checked apart, since a counted repetition compiles to nested groups.
var validID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]+$`) })

// Create starts a new, empty session for cwd.
func (s *Store) Create(cwd string) (*Transcript, error) {
	return s.open(cwd, s.newID(), true)
}

// CreateID starts a new, empty session for cwd with the given id (one the
// caller chose, such as the CLI's --session-id). An invalid id, or one
// that exists already, is an error.
func (s *Store) CreateID(cwd, id string) (*Transcript, error) {
	if len(id) > 128 || !validID().MatchString(id) || id == "." || id == ".." {
		return nil, fmt.Errorf("session: invalid id %q", id)
	}
	sess, err := s.open(cwd, id, true)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("session: %s exists already (resume it instead)", id)
	}
	return sess, err
}

// Open resumes session id of cwd: its records are loaded and appends go to
// the end of its file.
func (s *Store) Open(cwd, id string) (*Transcript, error) {
	if len(id) > 128 || !validID().MatchString(id) || id == "." || id == ".." {
		return nil, fmt.Errorf("session: invalid id %q", id)
	}
	return s.open(cwd, id, false)
}

// Latest returns the id of the most recently modified session of cwd.
func (s *Store) Latest(cwd string) (string, error) {
	infos, err := s.List(cwd)
	if err != nil {
		return "", err
	}
	if len(infos) == 0 {
		return "", fmt.Errorf("%w: no session in %s", ErrNotFound, cwd)
	}
	return infos[0].ID, nil
}

// Info describes a stored session.
type Info struct {
	ID      string
	Path    string
	ModTime time.Time
	Size    int64
}

// List returns the sessions of cwd, newest first.
func (s *Store) List(cwd string) ([]Info, error) {
	entries, err := os.ReadDir(s.Dir(cwd))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session: list: %w", err)
	}
	var out []Info
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, Info{ID: strings.TrimSuffix(name, ".jsonl"), Path: filepath.Join(s.Dir(cwd), name), ModTime: fi.ModTime(), Size: fi.Size()})
	}
	slices.SortFunc(out, func(a, b Info) int {
		if c := b.ModTime.Compare(a.ModTime); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Fork copies session id of cwd into a new session (new id, every record
// re-stamped with the new session id and marked ForkedFrom) and returns it
// open for appends. The original is not changed.
func (s *Store) Fork(cwd, id string) (*Transcript, error) {
	src, err := s.Open(cwd, id)
	if err != nil {
		return nil, err
	}
	recs := src.Records()
	if err := src.Close(); err != nil {
		return nil, err
	}
	dst, err := s.Create(cwd)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		r.SessionID = dst.ID
		r.ForkedFrom = id
		if err := dst.write(r); err != nil {
			dst.Close()
			return nil, err
		}
	}
	return dst, nil
}

// ForkBefore copies session id under a new id up to, not including, the
// record uuid (a user message): the conversation as it was before that
// message was sent. The source is unchanged. An unknown uuid is an error
// wrapping ErrNotFound.
func (s *Store) ForkBefore(cwd, id, uuid string) (*Transcript, error) {
	src, err := s.Open(cwd, id)
	if err != nil {
		return nil, err
	}
	recs := src.Records()
	if err := src.Close(); err != nil {
		return nil, err
	}
	cut := slices.IndexFunc(recs, func(r Record) bool { return r.UUID == uuid })
	if cut < 0 {
		return nil, fmt.Errorf("%w: message %s in session %s", ErrNotFound, uuid, id)
	}
	dst, err := s.Create(cwd)
	if err != nil {
		return nil, err
	}
	for _, r := range recs[:cut] {
		r.SessionID = dst.ID
		r.ForkedFrom = id
		if err := dst.write(r); err != nil {
			dst.Close()
			return nil, err
		}
	}
	return dst, nil
}

func (s *Store) open(cwd, id string, create bool) (*Transcript, error) {
	dir := s.Dir(cwd)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	path := filepath.Join(dir, id+".jsonl")
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("session: open %s: %w", id, err)
	}
	sess := &Transcript{ID: id, Path: path, CWD: cwd, f: f, store: s}
	if !create {
		if err := sess.load(); err != nil {
			f.Close()
			return nil, err
		}
	}
	return sess, nil
}

// Transcript is one open transcript. Its methods are safe for concurrent use.
type Transcript struct {
	ID   string
	Path string
	CWD  string

	store   *Store
	mu      sync.Mutex
	f       *os.File
	skipped int
	// last is the uuid of the last record, the parent of the next.
	last string
	// opened holds the records read at open until the first Records call
	// takes them or an append makes them stale: a session does not keep its
	// transcript in memory (it grew with every turn of a long run).
	opened []Record
}

// parseRecords decodes the complete lines of a transcript: it returns the
// records, the offset after the last complete line and how many lines were
// corrupt (a torn tail, with no final newline, is not counted here).
func parseRecords(data []byte) (recs []Record, good, skipped int) {
	for off := 0; off < len(data); {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			break // torn tail
		}
		line := data[off : off+nl]
		off += nl + 1
		good = off
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			skipped++
			continue
		}
		recs = append(recs, r)
	}
	return recs, good, skipped
}

// load reads every record; a torn or corrupt line is skipped, and a torn
// tail (no final newline) is cut off so the next append starts cleanly.
func (s *Transcript) load() error {
	data, err := io.ReadAll(s.f)
	if err != nil {
		return fmt.Errorf("session: read %s: %w", s.ID, err)
	}
	recs, good, skipped := parseRecords(data)
	s.skipped += skipped
	s.opened = recs
	if len(recs) > 0 {
		s.last = recs[len(recs)-1].UUID
	}
	if good < len(data) {
		s.skipped++
		if err := s.f.Truncate(int64(good)); err != nil {
			return fmt.Errorf("session: cut torn line of %s: %w", s.ID, err)
		}
	}
	if _, err := s.f.Seek(int64(good), io.SeekStart); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return nil
}

// Skipped returns how many corrupt or torn lines loading ignored.
func (s *Transcript) Skipped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skipped
}

// Records returns the records in file order, or nil if the transcript
// cannot be read ([Transcript.ReadRecords] gives the error). The session keeps
// no copy of its transcript: the first call after open hands out the
// records read at open; later calls (or any after an append) read the file.
func (s *Transcript) Records() []Record {
	recs, _ := s.ReadRecords()
	return recs
}

// ReadRecords is [Transcript.Records] with the error of reading the file.
// Corrupt lines are skipped, as at open.
func (s *Transcript) ReadRecords() ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opened != nil {
		recs := s.opened
		s.opened = nil
		return recs, nil
	}
	data, err := os.ReadFile(s.Path)
	if err != nil {
		return nil, fmt.Errorf("session: read %s: %w", s.ID, err)
	}
	recs, _, _ := parseRecords(data)
	return recs, nil
}

// LastUUID returns the uuid of the last record ("" if none).
func (s *Transcript) LastUUID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Append fills in r's UUID (if empty), ParentUUID (the previous record, if
// empty), SessionID, Timestamp (if zero) and CWD (if empty), writes it as one
// line and returns the stored record.
func (s *Transcript) Append(r Record) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.UUID == "" {
		r.UUID = s.store.newID()
	}
	if r.ParentUUID == "" {
		r.ParentUUID = s.last
	}
	r.SessionID = s.ID
	if r.Timestamp.IsZero() {
		r.Timestamp = s.store.now().UTC()
	}
	if r.CWD == "" {
		r.CWD = s.CWD
	}
	if err := s.writeLocked(r); err != nil {
		return Record{}, err
	}
	return r, nil
}

func (s *Transcript) write(r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeLocked(r)
}

func (s *Transcript) writeLocked(r Record) error {
	if s.f == nil {
		return fmt.Errorf("session %s: closed", s.ID)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("session: encode record: %w", err)
	}
	b = append(b, '\n')
	if _, err := s.f.Write(b); err != nil {
		return fmt.Errorf("session: append to %s: %w", s.ID, err)
	}
	s.last = r.UUID
	s.opened = nil // stale: the next Records reads the file
	return nil
}

// Sync flushes the transcript to stable storage.
func (s *Transcript) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	return s.f.Sync()
}

// Close closes the transcript file. Further appends fail.
func (s *Transcript) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// NewUUID returns a random RFC 4122 version-4 UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// ReadFile loads the records of a transcript file without opening it for
// appends (torn and corrupt lines are skipped).
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, r)
		}
	}
	return out, sc.Err()
}
