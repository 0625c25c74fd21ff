package streamjson

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/llm"
)

// ClaudeConfigDir returns the reference agent's configuration directory:
// $CLAUDE_CONFIG_DIR, else ~/.claude ("" when neither is known).
func ClaudeConfigDir(getenv func(string) string) string {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".claude")
	}
	return ""
}

// maxSlug is the length past which the reference shortens a project
// folder's name and adds a hash.
const maxSlug = 200

// ProjectSlug is the name of a working directory's folder under the
// reference agent's projects directory, as the Agent SDK computes it:
// every UTF-16 code unit outside [A-Za-z0-9] becomes '-'; a name longer
// than 200 keeps its first 200 and gets '-' and a base-36 hash of dir.
func ProjectSlug(dir string) string {
	units := utf16.Encode([]rune(dir))
	var sb strings.Builder
	for _, u := range units {
		if u < 0x80 && (u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9') {
			sb.WriteByte(byte(u))
		} else {
			sb.WriteByte('-')
		}
	}
	slug := sb.String()
	if len(slug) <= maxSlug {
		return slug
	}
	var h int32
	for _, u := range units {
		h = h*31 + int32(u)
	}
	return slug[:maxSlug] + "-" + strconv.FormatInt(int64(math.Abs(float64(h))), 36)
}

// Mirror writes a session's conversation as the reference agent's
// transcript — one JSON line per user and assistant message under
// <config dir>/projects/<slug of the working directory>/<session id>.jsonl —
// so that the Agent SDK's session helpers (listSessions,
// getSessionMessages, getSessionInfo) see Gantry's sessions. Gantry's own
// transcript (package session) stays the one resume reads; the mirror is
// written, never read. Subagents' messages are not mirrored. A Mirror is
// safe for concurrent use; its write errors are reported once through
// Warn and end the mirroring.
type Mirror struct {
	// ConfigDir is the reference's configuration directory (see
	// [ClaudeConfigDir]); Dir the session's working directory.
	ConfigDir, Dir string
	// Version is written as each line's version.
	Version string
	// Warn receives the first write error (nil discards).
	Warn func(msg string)
	// Now is the clock (nil = time.Now).
	Now func() time.Time

	mu      sync.Mutex
	session string
	last    string // the previous line's uuid
	f       *os.File
	failed  bool
}

// mirrorLine is one line of the reference's transcript.
type mirrorLine struct {
	ParentUUID  *string `json:"parentUuid"`
	IsSidechain bool    `json:"isSidechain"`
	UserType    string  `json:"userType"`
	CWD         string  `json:"cwd"`
	SessionID   string  `json:"sessionId"`
	Version     string  `json:"version"`
	GitBranch   string  `json:"gitBranch"`
	Type        string  `json:"type"`
	Message     any     `json:"message"`
	UUID        string  `json:"uuid"`
	Timestamp   string  `json:"timestamp"`
	Entrypoint  string  `json:"entrypoint,omitempty"`
}

// Event mirrors the conversation messages among a run's events.
func (m *Mirror) Event(ev agent.Event) {
	if m == nil {
		return
	}
	switch e := ev.(type) {
	case *agent.InitEvent:
		m.mu.Lock()
		if e.SessionID != m.session {
			m.closeLocked()
			m.session, m.last = e.SessionID, ""
		}
		m.mu.Unlock()
	case *agent.MessageEvent:
		m.message(e)
	}
}

func (m *Mirror) message(e *agent.MessageEvent) {
	var msg any
	switch e.Message.Role {
	case llm.RoleAssistant:
		info := agent.ReplyInfo{}
		if e.Reply != nil {
			info = *e.Reply
		}
		am := APIMessage{ID: info.ID, Type: "message", Role: "assistant", Model: info.Model, Content: APIBlocks(e.Message.Content), Usage: usageShape(info.Usage)}
		if info.StopReason != "" {
			am.StopReason = ptr(string(info.StopReason))
		}
		msg = am
	case llm.RoleUser:
		if len(e.Message.Content) == 1 && e.Message.Content[0].Type == llm.TypeText {
			// A typed prompt is a string, as the reference writes it.
			msg = map[string]any{"role": "user", "content": e.Message.Content[0].Text}
		} else {
			msg = UserParam{Role: "user", Content: APIBlocks(e.Message.Content)}
		}
	default:
		return
	}
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failed || m.session == "" {
		return
	}
	uuid := e.UUID
	if uuid == "" {
		return // not in Gantry's transcript either
	}
	line := mirrorLine{IsSidechain: false, UserType: "external", CWD: m.Dir, SessionID: m.session, Version: m.Version,
		Type: string(e.Message.Role), Message: msg, UUID: uuid, Timestamp: now().UTC().Format("2006-01-02T15:04:05.000Z"), Entrypoint: "sdk-cli"}
	if m.last != "" {
		line.ParentUUID = ptr(m.last)
	}
	if err := m.writeLocked(line); err != nil {
		m.failed = true
		if m.Warn != nil {
			m.Warn(fmt.Sprintf("the Agent SDK's copy of the transcript is not written: %v", err))
		}
		return
	}
	m.last = uuid
}

func (m *Mirror) writeLocked(line mirrorLine) error {
	if m.f == nil {
		dir := filepath.Join(m.ConfigDir, "projects", ProjectSlug(m.Dir))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		path := filepath.Join(dir, m.session+".jsonl")
		if m.last == "" {
			m.last = lastUUID(path) // a resumed session continues its chain
			if m.last != "" {
				line.ParentUUID = ptr(m.last)
			}
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		m.f = f
	}
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	_, err = m.f.Write(append(b, '\n'))
	return err
}

// lastUUID is the uuid of a transcript file's last complete line ("" if
// there is none).
func lastUUID(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var l struct {
			UUID string `json:"uuid"`
		}
		if json.Unmarshal([]byte(lines[i]), &l) == nil && l.UUID != "" {
			return l.UUID
		}
	}
	return ""
}

func (m *Mirror) closeLocked() {
	if m.f != nil {
		_ = m.f.Close()
		m.f = nil
	}
}

// Close closes the transcript file.
func (m *Mirror) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closeLocked()
	return nil
}
