package file

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/safefs"
)

// Default limits of [Options].
const (
	DefaultMaxLines       = 2000
	DefaultMaxLineChars   = 2000
	DefaultMaxFileSize    = 256 << 10
	DefaultHardMaxSize    = 10 << 20
	DefaultMaxOutputBytes = 256 << 10
	DefaultMaxImageBytes  = 3_750_000
	DefaultMaxEditSize    = 64 << 20
	DefaultMaxPDFPages    = 20
)

// Options configures the file tools. The zero value is ready to use: every
// zero field means the default named in its comment.
type Options struct {
	// MaxLines is the number of lines Read returns when the call gives no
	// limit. Default [DefaultMaxLines] (2,000).
	MaxLines int
	// MaxLineChars is the length in characters past which Read cuts a line
	// and marks the cut. Default [DefaultMaxLineChars] (2,000).
	MaxLineChars int
	// MaxFileSize is the size above which Read refuses to read a whole file
	// when the call gives neither offset nor limit nor allow_large. Default
	// [DefaultMaxFileSize] (256 KB).
	MaxFileSize int64
	// HardMaxSize bounds a read with allow_large, a notebook, a PDF, and the
	// size up to which Read hashes a file for the file-state cache. Default
	// [DefaultHardMaxSize] (10 MB).
	HardMaxSize int64
	// MaxOutputBytes bounds the text one Read returns (a call without
	// allow_large); the output stops at a line boundary with a note telling
	// the model the offset to continue from. Default [DefaultMaxOutputBytes]
	// (256 KB). With allow_large the bound is HardMaxSize.
	MaxOutputBytes int
	// MaxImageBytes bounds an image Read returns as an image block (and an
	// image output of a notebook). Default [DefaultMaxImageBytes] (3.75 MB,
	// which is 5 MB in base64).
	MaxImageBytes int64
	// MaxEditSize bounds the size of a file Write, Edit or NotebookEdit
	// loads to change it. Default [DefaultMaxEditSize] (64 MB).
	MaxEditSize int64
	// MaxPDFPages is the number of PDF pages one Read returns. Default
	// [DefaultMaxPDFPages] (20).
	MaxPDFPages int
	// Locks serialises writes to one path. Nil means: [Tools] shares one
	// new set among the tools it builds; a constructor called alone makes
	// its own.
	Locks *Locks
	// JournalDir, when set, is a directory where Write, Edit and
	// NotebookEdit record each temporary file while it exists (one journal
	// per process), so that the temporary files of a process that crashed
	// mid-write are removed by the next process: by [SweepTemp] at its
	// start, or at its first write. Empty means no journal (a crash
	// mid-write may leave a hidden ".<name>.gantry-<hex>.tmp" file).
	JournalDir string
	// Now returns the current time (for FileState.At). Nil means time.Now.
	Now func() time.Time
	// NewCellID returns a fresh notebook cell id. Nil means 8 random hex
	// digits (Jupyter's form).
	NewCellID func() string

	// wrapTemp, when set (by tests), wraps the writer of the temporary file
	// of every atomic write: the seam for faults such as a full disk.
	wrapTemp func(io.Writer) io.Writer
	// journal is opened on the first write; shared by the tools of [Tools].
	journal *journalHolder
}

// journalHolder opens a journal once, on first use.
type journalHolder struct {
	dir  string
	once sync.Once
	j    *safefs.Journal
}

func (h *journalHolder) get() *safefs.Journal {
	if h == nil || h.dir == "" {
		return nil
	}
	h.once.Do(func() {
		// Without a journal writes still work; only crash leftovers stay.
		h.j, _, _ = safefs.OpenJournal(h.dir)
	})
	return h.j
}

// SweepTemp removes the temporary files that processes which have ended
// left behind while writing (as recorded in the journals in dir, see
// [Options.JournalDir]) and returns them. Call it when a program starts.
func SweepTemp(dir string) ([]string, error) { return safefs.Sweep(dir) }

func (o Options) withDefaults() Options {
	if o.MaxLines <= 0 {
		o.MaxLines = DefaultMaxLines
	}
	if o.MaxLineChars <= 0 {
		o.MaxLineChars = DefaultMaxLineChars
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.HardMaxSize <= 0 {
		o.HardMaxSize = DefaultHardMaxSize
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if o.MaxImageBytes <= 0 {
		o.MaxImageBytes = DefaultMaxImageBytes
	}
	if o.MaxEditSize <= 0 {
		o.MaxEditSize = DefaultMaxEditSize
	}
	if o.MaxPDFPages <= 0 {
		o.MaxPDFPages = DefaultMaxPDFPages
	}
	if o.Locks == nil {
		o.Locks = NewLocks()
	}
	if o.journal == nil || o.journal.dir != o.JournalDir {
		o.journal = &journalHolder{dir: o.JournalDir}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewCellID == nil {
		o.NewCellID = randomCellID
	}
	return o
}

func randomCellID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
