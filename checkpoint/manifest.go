package checkpoint

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"
)

// EntryType is the kind of a recorded path.
type EntryType byte

// Entry types.
const (
	TypeFile    EntryType = 'f'
	TypeDir     EntryType = 'd'
	TypeSymlink EntryType = 'l'
)

func (t EntryType) String() string {
	switch t {
	case TypeFile:
		return "file"
	case TypeDir:
		return "dir"
	case TypeSymlink:
		return "symlink"
	}
	return "unknown"
}

// Entry is one path of a recorded tree: a regular file (its content by
// hash), a directory, or a symbolic link (its target, never followed).
type Entry struct {
	// Path is slash-separated and relative to the project directory.
	Path string
	Type EntryType
	// Mode holds the permission bits and setuid, setgid and sticky.
	Mode fs.FileMode
	// Size, MTime, CTime and Ino are the file's stat at recording time,
	// used to skip hashing a file that did not change.
	Size         int64
	MTime, CTime int64
	Ino          uint64
	// Hash is the hex SHA-256 of a file's content.
	Hash string
	// Target is a symbolic link's target, as stored in the link.
	Target string
}

// same reports whether e and o record the same content: type, mode, hash
// and link target (stat fields aside).
func (e *Entry) same(o *Entry) bool {
	return e != nil && o != nil && e.Type == o.Type && e.Mode == o.Mode && e.Hash == o.Hash && e.Target == o.Target
}

// NotCovered is a path a checkpoint does not hold, and why: ignored by
// .gitignore (a directory stands for everything below it), larger than the
// per-file cap, over the checkpoint's size or file cap, a special file
// (socket, device, fifo), or unreadable. Rewinds never touch such paths.
type NotCovered struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Reasons of [NotCovered].
const (
	ReasonIgnored    = "ignored"
	ReasonTooLarge   = "larger than the per-file cap"
	ReasonTotalCap   = "over the checkpoint size cap"
	ReasonFileCap    = "over the checkpoint file cap"
	ReasonSpecial    = "not a regular file, directory or symbolic link"
	ReasonUnreadable = "unreadable"
)

// manifest is one recorded tree, stored content-addressed under
// manifests/<sha256 of its encoding> (so an unchanged tree is stored
// once).
type manifest struct {
	// taken is when the tree was recorded (kept in memory and in the tip,
	// not in the encoding).
	taken      time.Time
	entries    []Entry // in walk order
	notCovered []NotCovered
	index      map[string]*Entry // built on demand
	// ignoreSig identifies the ignore files the scan read (in memory
	// only; "" when unknown): see scanner.ignoreSignature.
	ignoreSig string
}

func (m *manifest) lookup(p string) *Entry {
	if m == nil {
		return nil
	}
	if m.index == nil {
		m.index = make(map[string]*Entry, len(m.entries))
		for i := range m.entries {
			m.index[m.entries[i].Path] = &m.entries[i]
		}
	}
	return m.index[p]
}

// covered reports whether p (or a directory above it) is not listed as
// not covered.
func (m *manifest) covered(p string) bool {
	for _, n := range m.notCovered {
		if n.Path == p || strings.HasPrefix(p, n.Path+"/") {
			return false
		}
	}
	return true
}

const manifestMagic = "gantry-checkpoint-manifest 1"

// encode writes the manifest's text form and returns it with its hash.
func (m *manifest) encode() ([]byte, string) { return m.encodeTo(nil) }

// encodeTo is encode appending to buf[:0] (reused when large enough).
func (m *manifest) encodeTo(buf []byte) ([]byte, string) {
	// A file's line is at most ~130 bytes plus its path (type, mode,
	// size, two 19-digit times, inode, the 64-digit hash, separators):
	// size the buffer from the paths so that it does not grow (and copy)
	// while it is filled.
	size := 64
	for i := range m.entries {
		size += 144 + len(m.entries[i].Path) + len(m.entries[i].Target)
	}
	for _, n := range m.notCovered {
		size += 8 + len(n.Path) + len(n.Reason)
	}
	b := buf[:0]
	if cap(b) < size {
		b = make([]byte, 0, size)
	}
	b = append(b, manifestMagic...)
	b = append(b, '\n')
	for i := range m.entries {
		e := &m.entries[i]
		b = append(b, byte(e.Type), ' ')
		b = strconv.AppendUint(b, uint64(e.Mode), 8)
		switch e.Type {
		case TypeFile:
			b = append(b, ' ')
			b = strconv.AppendInt(b, e.Size, 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, e.MTime, 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, e.CTime, 10)
			b = append(b, ' ')
			b = strconv.AppendUint(b, e.Ino, 10)
			b = append(b, ' ')
			b = append(b, e.Hash...)
		case TypeSymlink:
			b = append(b, ' ')
			b = strconv.AppendQuote(b, e.Target)
		}
		b = append(b, ' ')
		b = appendQuote(b, e.Path)
		b = append(b, '\n')
	}
	for _, n := range m.notCovered {
		b = append(b, "n "...)
		b = strconv.AppendQuote(b, n.Reason)
		b = append(b, ' ')
		b = strconv.AppendQuote(b, n.Path)
		b = append(b, '\n')
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])
}

// appendQuote is strconv.AppendQuote with a fast path for the common
// path, printable ASCII without a quote or backslash, which it quotes as
// is (the same bytes AppendQuote gives).
func appendQuote(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return strconv.AppendQuote(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// errBadLine is wrapped by decode's errors.
var errBadLine = errors.New("malformed line")

// decodeManifest parses a manifest whose content must hash to want.
func decodeManifest(data []byte, want string) (*manifest, error) {
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != want {
		return nil, fmt.Errorf("%w: manifest %s does not match its hash", ErrCorrupt, short(want))
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	if !sc.Scan() {
		return nil, fmt.Errorf("%w: manifest %s is empty", ErrCorrupt, short(want))
	}
	if sc.Text() != manifestMagic {
		return nil, fmt.Errorf("%w: manifest %s: unknown format", ErrCorrupt, short(want))
	}
	m := &manifest{}
	line := 1
	for sc.Scan() {
		line++
		if err := m.parseLine(sc.Text()); err != nil {
			return nil, fmt.Errorf("%w: manifest %s line %d: %v", ErrCorrupt, short(want), line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: manifest %s: %v", ErrCorrupt, short(want), err)
	}
	return m, nil
}

func (m *manifest) parseLine(l string) error {
	if len(l) < 3 || l[1] != ' ' {
		return errBadLine
	}
	typ, rest := EntryType(l[0]), l[2:]
	if typ == 'n' {
		reason, rest, err := quoted(rest)
		if err != nil {
			return err
		}
		p, rest, err := quoted(rest)
		if err != nil || rest != "" {
			return errBadLine
		}
		m.notCovered = append(m.notCovered, NotCovered{Path: p, Reason: reason})
		return nil
	}
	e := Entry{Type: typ}
	modeS, rest, _ := strings.Cut(rest, " ")
	mode, err := strconv.ParseUint(modeS, 8, 32)
	if err != nil {
		return errBadLine
	}
	e.Mode = fs.FileMode(mode)
	switch typ {
	case TypeFile:
		f := strings.SplitN(rest, " ", 6)
		if len(f) != 6 || len(f[4]) != 64 {
			return errBadLine
		}
		var errs [4]error
		e.Size, errs[0] = strconv.ParseInt(f[0], 10, 64)
		e.MTime, errs[1] = strconv.ParseInt(f[1], 10, 64)
		e.CTime, errs[2] = strconv.ParseInt(f[2], 10, 64)
		e.Ino, errs[3] = strconv.ParseUint(f[3], 10, 64)
		if errors.Join(errs[:]...) != nil {
			return errBadLine
		}
		e.Hash, rest = f[4], f[5]
	case TypeSymlink:
		t, r, err := quoted(rest)
		if err != nil {
			return err
		}
		e.Target, rest = t, strings.TrimPrefix(r, " ")
	case TypeDir:
	default:
		return errBadLine
	}
	p, tail, err := quoted(rest)
	if err != nil || tail != "" || !validRel(p) {
		return errBadLine
	}
	e.Path = p
	m.entries = append(m.entries, e)
	return nil
}

// quoted reads one Go-quoted string at the start of s and returns it and
// what follows (a separating space dropped).
func quoted(s string) (string, string, error) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", errBadLine
	}
	v, err := strconv.Unquote(q)
	if err != nil {
		return "", "", errBadLine
	}
	return v, strings.TrimPrefix(s[len(q):], " "), nil
}

// validRel reports whether p is a clean relative slash path that stays
// inside the project (no "..", no absolute path, no empty element).
func validRel(p string) bool {
	if p == "" || p == "." || strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return false
	}
	for el := range strings.SplitSeq(p, "/") {
		if el == "" || el == "." || el == ".." {
			return false
		}
	}
	return true
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
