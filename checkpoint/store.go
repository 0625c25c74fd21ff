// Package checkpoint records the state of a project's files and restores
// it: every change is undone, whatever made it — the agent's Write and
// Edit calls, a `sed -i` or a code generator run through Bash, a person.
//
// A [Store] keeps checkpoints outside the project (by default under
// $GANTRY_HOME/checkpoints/<project>; the project's own .git is never
// read or written). A checkpoint is a manifest of the project's tree —
// every file (by the SHA-256 of its content), directory and symbolic link
// (its target, never followed), with permissions — plus the list of paths
// it does not cover and why. File contents are stored by their hash, a
// manifest by the hash of its own encoding, both appended with the
// checkpoint records to a journal file of the Store's own (journal.go).
// Recording is incremental: a file whose size,
// modification and change times, inode and mode equal those of the last
// recording is not read again.
//
// [Store.Rewind] restores a checkpoint: files created since are removed,
// modified and deleted ones written back (atomically, permissions kept),
// symbolic links recreated as links. Paths a checkpoint does not cover
// (ignored by .gitignore, over a size cap, special files) are never
// touched. Before writing anything the rewind reads back and verifies
// every manifest and object it needs, so a corrupt store is reported and
// nothing is applied. A path someone else changed since the last
// recording (the "tip") is not overwritten unless RewindOptions.Force is
// set, and the state before a rewind is itself recorded, so a rewind can
// be undone.
package checkpoint

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/textutil"
)

// Defaults of [Options].
const (
	DefaultMaxFileSize  = 10 << 20
	DefaultMaxTotalSize = 1 << 30
	DefaultMaxFiles     = 100_000
	DefaultRetention    = 30 * 24 * time.Hour
)

// Kind says why a checkpoint was recorded.
type Kind string

// Checkpoint kinds.
const (
	// KindTurn: at the start of a user turn, before the prompt is sent.
	KindTurn Kind = "turn"
	// KindTool: before a tool call that may write.
	KindTool Kind = "tool"
	// KindRewind: the state just before a rewind (to undo it).
	KindRewind Kind = "rewind"
)

// Errors.
var (
	// ErrNotFound: no checkpoint has the id.
	ErrNotFound = errors.New("checkpoint not found")
	// ErrCorrupt: a manifest, object or record of the store does not
	// match its hash or cannot be parsed. Nothing was written.
	ErrCorrupt = errors.New("checkpoint store is corrupt")
	// ErrConflict is wrapped by a [*ConflictError].
	ErrConflict = errors.New("files changed since the last checkpoint")
)

// ConflictError lists the paths a rewind would overwrite although they
// changed since the last recording (the tip): someone else edited them.
type ConflictError struct{ Paths []string }

func (e *ConflictError) Error() string {
	const show = 10
	p := e.Paths
	more := ""
	if len(p) > show {
		more = fmt.Sprintf(" and %d more", len(p)-show)
		p = p[:show]
	}
	return fmt.Sprintf("%v: %s%s (rewind with force to overwrite them)", ErrConflict, strings.Join(p, ", "), more)
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// Options configure a [Store]. Dir is required; every other zero value is
// a default.
type Options struct {
	// Dir is the project directory whose files are recorded.
	Dir string
	// StoreDir is where the checkpoints are kept. "" means
	// DirFor(Home, Dir); with Home "" too, Open fails.
	StoreDir string
	// Home is the Gantry home ($GANTRY_HOME) used when StoreDir is "".
	Home string
	// MaxFileSize is the largest file recorded (0 = DefaultMaxFileSize);
	// larger files are listed as not covered.
	MaxFileSize int64
	// MaxTotalSize bounds the summed size of the files one checkpoint
	// covers (0 = DefaultMaxTotalSize); MaxFiles the number of paths
	// (0 = DefaultMaxFiles). What is over a cap is listed as not covered.
	MaxTotalSize int64
	MaxFiles     int
	// Retention is how long checkpoints are kept by [Store.Prune]
	// (0 = DefaultRetention).
	Retention time.Duration
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// DirFor returns the store directory of project under home:
// home/checkpoints/<project path with every non-alphanumeric character
// replaced by "-">, the naming of session transcripts.
func DirFor(home, project string) string {
	return filepath.Join(home, "checkpoints", unsafeChars().ReplaceAllString(filepath.Clean(project), "-"))
}

var unsafeChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9]`) }) // compiled on first use, not at init

// Info describes one checkpoint.
type Info struct {
	ID      string    `json:"id"`
	Session string    `json:"session_id,omitempty"`
	Kind    Kind      `json:"kind"`
	Created time.Time `json:"created"`
	// Label is the user's prompt (cut) for a turn, the call's
	// description for a tool checkpoint.
	Label     string `json:"label,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Manifest is the hash of the recorded tree.
	Manifest string `json:"manifest"`
	// Files is how many paths the checkpoint covers.
	Files int `json:"files"`
	// NotCovered lists (up to maxListed) paths it does not cover;
	// NotCoveredCount is how many there are.
	NotCovered      []NotCovered `json:"not_covered,omitempty"`
	NotCoveredCount int          `json:"not_covered_count,omitempty"`
	// Deferred marks a checkpoint named by [Store.Defer] that no
	// recording of the same Store took up (the run changed nothing after
	// it): it has no Manifest, and its state is that of the next
	// recording of the project made after it (any checkpoint, the tip),
	// or the present state if there is none — see [Store.Rewind].
	Deferred bool `json:"deferred,omitempty"`
}

// maxListed bounds the not-covered paths kept in an Info.
const maxListed = 100

// Meta describes a checkpoint to record.
type Meta struct {
	// ID is the checkpoint's id: 1-128 of [A-Za-z0-9_-] ("" = a random
	// one). The agent uses the user message's uuid for a turn and the tool
	// use id for a tool call.
	ID        string
	Session   string
	Kind      Kind
	Label     string
	ToolUseID string
}

// Store records and restores checkpoints of one project. It is safe for
// concurrent use, also by several processes on one store directory
// (each appends to its own journal; what they store is content-addressed).
type Store struct {
	opts Options
	dir  string // the project
	root string // the store
	now  func() time.Time

	mu      sync.Mutex
	last    *manifest  // the last tree recorded or loaded: the stat cache
	made    bool       // the store's directories exist
	pending []deferred // named by Defer, not recorded yet
	created bool       // a checkpoint was created since the tip was last recorded
	// tipHash is the tip Create recorded (the manifest of last) while
	// tipLater says it is not written to the tip file yet.
	tipHash  string
	tipLater bool

	j      journal // where objects, manifests and records are appended
	encBuf []byte  // the last manifest's encoding (guarded by mu)
}

// validID is compiled on first use, not at init; its length bound (128) is
// checked apart, since a counted repetition compiles to nested groups.
var validID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// ValidID reports whether id is usable as a checkpoint id: 1-128 of
// [A-Za-z0-9_-].
func ValidID(id string) bool { return len(id) <= 128 && validID().MatchString(id) }

// Open opens the store of a project. Nothing is read or created on disk
// until the first recording: a run that records nothing costs nothing.
func Open(opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, errors.New("checkpoint: Options.Dir is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	root := opts.StoreDir
	if root == "" {
		if opts.Home == "" {
			return nil, errors.New("checkpoint: Options.StoreDir or Options.Home is required")
		}
		root = DirFor(opts.Home, dir)
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.MaxTotalSize <= 0 {
		opts.MaxTotalSize = DefaultMaxTotalSize
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	s := &Store{opts: opts, dir: dir, root: root, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// ensureLocked creates the store's directory (once); what is recorded
// goes to the journal (journal.go), made at its first record.
func (s *Store) ensureLocked() error {
	if s.made {
		return nil
	}
	if err := os.MkdirAll(s.root, 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	s.made = true
	return nil
}

// Dir returns the project directory; StoreDir the store's.
func (s *Store) Dir() string      { return s.dir }
func (s *Store) StoreDir() string { return s.root }

// Create records the project's current state as a checkpoint and makes it
// the tip (the state rewinds compare against to find other people's
// edits).
func (s *Store) Create(ctx context.Context, m Meta) (*Info, error) {
	if m.ID == "" {
		m.ID = randomID()
	}
	if !ValidID(m.ID) {
		return nil, fmt.Errorf("checkpoint: invalid id %q", m.ID)
	}
	if m.Kind == "" {
		m.Kind = KindTurn
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	man, hash, err := s.recordLocked(ctx, true)
	if err != nil {
		return nil, err
	}
	s.created = true
	return s.refLocked(m, time.Time{}, man, hash)
}

// deferred is a checkpoint named by Defer, and when.
type deferred struct {
	Meta
	at time.Time
}

// refLocked writes the record of checkpoint m of the tree man (stored as
// hash), created at (zero: now).
func (s *Store) refLocked(m Meta, at time.Time, man *manifest, hash string) (*Info, error) {
	if at.IsZero() {
		at = s.now()
	}
	info := &Info{
		ID: m.ID, Session: m.Session, Kind: m.Kind, Created: at.UTC(), Label: cut(m.Label, 200),
		ToolUseID: m.ToolUseID, Manifest: hash, Files: len(man.entries), NotCoveredCount: len(man.notCovered),
	}
	info.NotCovered = man.notCovered[:min(len(man.notCovered), maxListed)]
	if err := s.writeRef(info); err != nil {
		return nil, err
	}
	return info, nil
}

// Defer names a checkpoint of the current state without recording it:
// the next recording of this Store ([Store.Create], [Store.Record], the
// state before a [Store.Rewind]) records it too, with the same tree —
// the agent defers the checkpoint of a turn, since the turn's read-only
// calls change nothing and a turn that writes takes a checkpoint before
// its first writing call anyway. [Store.Settle] writes what is still
// pending as deferred records (no scan). The id is checked and returned
// at once; a duplicate id is reported when the record is written.
func (s *Store) Defer(m Meta) (string, error) {
	if m.ID == "" {
		m.ID = randomID()
	}
	if !ValidID(m.ID) {
		return "", fmt.Errorf("checkpoint: invalid id %q", m.ID)
	}
	if m.Kind == "" {
		m.Kind = KindTurn
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, deferred{m, s.now()})
	return m.ID, nil
}

// Settle ends a run's recording: when a checkpoint was created since the
// tip was last recorded (the call it was taken for may have changed
// files), it records the tip as [Store.Record] does; otherwise nothing
// can have changed through the agent and no scan is made — the
// checkpoints still deferred are written as deferred records
// (Info.Deferred), whose state is that of the next recording.
func (s *Store) Settle(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.created {
		_, _, err := s.recordLocked(ctx, false)
		return err
	}
	if len(s.pending) == 0 {
		return nil
	}
	if err := s.ensureLocked(); err != nil {
		return err
	}
	var errs []error
	for _, m := range s.pending {
		info := &Info{ID: m.ID, Session: m.Session, Kind: m.Kind, Created: m.at.UTC(), Label: cut(m.Label, 200), ToolUseID: m.ToolUseID, Deferred: true}
		errs = append(errs, s.writeRef(info))
	}
	s.pending = nil
	return errors.Join(errs...)
}

// Record records the current state as the tip without a checkpoint (the
// agent does it when a run ends, so that a rewind tells the agent's last
// changes from someone else's).
func (s *Store) Record(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, err := s.recordLocked(ctx, false)
	return err
}

// recordLocked scans the tree, stores it and makes it the tip; the
// deferred checkpoints get its tree. With lazyTip the tip file is written
// by the next Record or Settle (a checkpoint before a call is followed by
// one of them when the run ends; a process that dies before leaves the
// previous tip, and a rewind then reports the changes since as conflicts
// rather than overwrite them).
func (s *Store) recordLocked(ctx context.Context, lazyTip bool) (*manifest, string, error) {
	if err := s.ensureLocked(); err != nil {
		return nil, "", err
	}
	prev := s.last
	if prev == nil {
		prev, _, _ = s.loadTip() // a missing or corrupt tip only costs hashing
	}
	man, err := s.scan(ctx, prev)
	if err != nil {
		return nil, "", err
	}
	hash, err := s.putManifest(man)
	if err != nil {
		return nil, "", err
	}
	if lazyTip {
		s.tipHash, s.tipLater = hash, true
	} else {
		if err := s.writeTip(hash, man.taken); err != nil {
			return nil, "", err
		}
		s.created = false
	}
	s.last = man
	if err := s.takePendingLocked(man, hash); err != nil {
		return nil, "", err
	}
	return man, hash, nil
}

// takePendingLocked records the deferred checkpoints with the tree man.
func (s *Store) takePendingLocked(man *manifest, hash string) error {
	var errs []error
	for _, m := range s.pending {
		_, err := s.refLocked(m.Meta, m.at, man, hash)
		errs = append(errs, err)
	}
	s.pending = nil
	return errors.Join(errs...)
}

// List returns the checkpoints of session ("" = every session), oldest
// first. A record that cannot be read is reported as ErrCorrupt after the
// readable ones.
func (s *Store) List(session string) ([]Info, error) {
	ents, err := os.ReadDir(filepath.Join(s.root, "refs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var out []Info
	var bad []string
	seen := map[string]bool{}
	jerr := s.eachJournal(func(p string, recs []jrec) {
		f, err := os.Open(p)
		if err != nil {
			return // pruned meanwhile
		}
		defer f.Close()
		for _, r := range recs {
			if r.typ != 'r' || seen[r.key] {
				continue
			}
			seen[r.key] = true
			b := make([]byte, r.n)
			_, err := f.ReadAt(b, r.off)
			var info *Info
			if err == nil {
				info, err = parseRef(b, r.key)
			}
			if err != nil {
				bad = append(bad, r.key)
				continue
			}
			if session == "" || info.Session == session {
				out = append(out, *info)
			}
		}
	})
	if jerr != nil {
		bad = append(bad, jerr.Error())
	}
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || seen[id] {
			continue
		}
		info, err := s.Get(id)
		if err != nil {
			bad = append(bad, id)
			continue
		}
		if session == "" || info.Session == session {
			out = append(out, *info)
		}
	}
	slices.SortStableFunc(out, func(a, b Info) int { return a.Created.Compare(b.Created) })
	if len(bad) > 0 {
		return out, fmt.Errorf("%w: unreadable checkpoint records %s", ErrCorrupt, strings.Join(bad, ", "))
	}
	return out, nil
}

// Get returns one checkpoint's description.
func (s *Store) Get(id string) (*Info, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("checkpoint %q: %w", id, ErrNotFound)
	}
	l, ok, err := s.jfind('r', id)
	if err != nil {
		return nil, err
	}
	var b []byte
	if ok {
		b, err = jbody(l)
	}
	if !ok || errors.Is(err, fs.ErrNotExist) { // loose, or unpacked by a prune
		b, err = os.ReadFile(filepath.Join(s.root, "refs", id+".json"))
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return parseRef(b, id)
}

// parseRef decodes and checks the record of checkpoint id.
func parseRef(b []byte, id string) (*Info, error) {
	var info Info
	if err := json.Unmarshal(b, &info); err != nil || info.ID != id || len(info.Manifest) != 64 && !(info.Deferred && info.Manifest == "") {
		return nil, fmt.Errorf("%w: checkpoint record %s", ErrCorrupt, id)
	}
	return &info, nil
}

// writeRef appends a checkpoint's record to the journal. An id already
// used is refused when its record is loose, in this Store's journal or
// in another journal this Store has read (the ids the agent gives are
// unique: a message's uuid, a tool use's id).
func (s *Store) writeRef(info *Info) error {
	b, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := os.Lstat(filepath.Join(s.root, "refs", info.ID+".json")); err == nil || s.jknown('r', info.ID) {
		return fmt.Errorf("checkpoint: id %q: %w", info.ID, fs.ErrExist)
	}
	return s.jappend('r', info.ID, b)
}

// tip

// The tip file holds the manifest hash and when the tree was recorded.
func (s *Store) writeTip(hash string, taken time.Time) error {
	s.tipLater = false
	return writeAtomic(filepath.Join(s.root, "tip"), fmt.Appendf(nil, "%s %d\n", hash, taken.UnixNano()))
}

// TipManifest returns the manifest hash of the last recording (a
// checkpoint or [Store.Record]), or "" when nothing was recorded yet: a
// checkpoint with the same hash holds the state the agent left.
func (s *Store) TipManifest() (string, error) {
	b, err := os.ReadFile(filepath.Join(s.root, "tip"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	hash, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	return hash, nil
}

// loadTip reads the tip's manifest: nil (and "") when there is none yet.
func (s *Store) loadTip() (*manifest, string, error) {
	if s.tipLater && s.last != nil {
		return s.last, s.tipHash, nil
	}
	b, err := os.ReadFile(filepath.Join(s.root, "tip"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("checkpoint: %w", err)
	}
	hash, ts, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	m, err := s.getManifest(hash)
	if err != nil {
		return nil, "", err
	}
	if ns, err := strconv.ParseInt(ts, 10, 64); err == nil {
		m.taken = time.Unix(0, ns)
	} else {
		m.taken = time.Now() // unknown: every file counts as racy
	}
	return m, hash, nil
}

// manifests

func (s *Store) manifestPath(hash string) string { return filepath.Join(s.root, "manifests", hash) }

func (s *Store) putManifest(m *manifest) (string, error) {
	// The encoding's buffer is kept for the next one (callers hold s.mu):
	// a checkpoint before an edit encodes a tree like the previous one.
	b, hash := m.encodeTo(s.encBuf)
	s.encBuf = b
	if s.jhasOwn('m', hash) {
		return hash, nil
	}
	if _, err := os.Stat(s.manifestPath(hash)); err == nil {
		return hash, nil
	}
	return hash, s.jappend('m', hash, b)
}

func (s *Store) getManifest(hash string) (*manifest, error) {
	if !isHash(hash) {
		return nil, fmt.Errorf("%w: bad manifest name %q", ErrCorrupt, hash)
	}
	b, err := os.ReadFile(s.manifestPath(hash))
	if errors.Is(err, fs.ErrNotExist) {
		var l jloc
		var ok bool
		if l, ok, err = s.jfind('m', hash); err == nil && ok {
			b, err = jbody(l)
		} else if err == nil {
			err = fs.ErrNotExist
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: manifest %s is missing", ErrCorrupt, short(hash))
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return decodeManifest(b, hash)
}

// objects

func (s *Store) objectPath(hash string) string {
	return filepath.Join(s.root, "objects", hash[:2], hash[2:])
}

// putObject stores data under its hash (once).
func (s *Store) putObject(hash string, data []byte) error {
	if s.jhasOwn('o', hash) {
		return nil
	}
	if _, err := os.Stat(s.objectPath(hash)); err == nil {
		return nil
	}
	return s.jappend('o', hash, data)
}

// openObject opens an object's content: loose or in a journal.
func (s *Store) openObject(hash string) (io.ReadCloser, error) {
	f, err := os.Open(s.objectPath(hash))
	if !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	l, ok, err := s.jfind('o', hash)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fs.ErrNotExist
	}
	return jopen(l)
}

// verifyObject reads an object back and checks its hash and size.
func (s *Store) verifyObject(hash string, size int64) error {
	f, err := s.openObject(hash)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: object %s is missing", ErrCorrupt, short(hash))
	}
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if n != size || hex.EncodeToString(h.Sum(nil)) != hash {
		return fmt.Errorf("%w: object %s does not match its hash", ErrCorrupt, short(hash))
	}
	return nil
}

// helpers

// writeAtomic writes a store file: a temporary sibling, then rename.
func writeAtomic(p string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

func isHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func cut(s string, n int) string { return textutil.Truncate(strings.TrimSpace(s), n) }

// Latest returns the newest checkpoint of kind ("" = any) of session (""
// = any session): for example the turn a rewind without an id undoes.
func (s *Store) Latest(session string, kind Kind) (*Info, error) {
	list, err := s.List(session)
	for i := len(list) - 1; i >= 0; i-- {
		if kind == "" || list[i].Kind == kind {
			return &list[i], nil
		}
	}
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("no %s checkpoint: %w", cmpOr(string(kind), "any"), ErrNotFound)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
