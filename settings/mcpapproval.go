package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// MCPApprovalFile is the name of the record of approved project MCP
// servers under the Gantry home.
const MCPApprovalFile = "mcp-approvals.json"

// MCPApprovals is the record of the MCP server definitions the user
// approved, per project folder: for each folder, a fingerprint of each
// server of its .mcp.json as it was when approved (the fingerprint's form
// is the MCP layer's business; this store compares nothing). A JSON file,
// default $GANTRY_HOME/mcp-approvals.json:
//
//	{"projects": [{"path": "/home/u/project", "approved_at": "2026-01-02T15:04:05Z",
//	               "servers": {"fs": "v1:sha256:…"}}]}
//
// Folders are recorded by resolved path ([Canonical]) and matched exactly
// (a record does not cover subfolders: each has its own .mcp.json). Safe
// for concurrent use within a process; writes are atomic (temp file and
// rename, mode 0600). It implements mcptool.ApprovalStore.
type MCPApprovals struct {
	// Path is the record's file.
	Path string
	// Now returns the current time; default time.Now.
	Now func() time.Time

	mu sync.Mutex
}

// MCPApprovalRecord is the approval of one project folder's servers.
type MCPApprovalRecord struct {
	Path       string    `json:"path"`
	ApprovedAt time.Time `json:"approved_at"`
	// Servers maps each approved server's name to its fingerprint.
	Servers map[string]string `json:"servers"`
}

type mcpApprovalDoc struct {
	Projects []MCPApprovalRecord `json:"projects"`
}

func (a *MCPApprovals) read() (mcpApprovalDoc, error) {
	var d mcpApprovalDoc
	b, err := os.ReadFile(a.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, fmt.Errorf("settings: MCP approvals: %w", err)
	}
	if len(trimSpace(b)) == 0 {
		return d, nil
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("settings: MCP approvals %s: %w", a.Path, err)
	}
	return d, nil
}

// Approvals returns the approved fingerprints of dir's servers by name,
// and whether dir has a record at all (false: its servers were never
// approved). A record may hold no servers: the folder was approved when
// its configuration had none.
func (a *MCPApprovals) Approvals(dir string) (map[string]string, bool, error) {
	c, err := Canonical(dir)
	if err != nil {
		return nil, false, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	d, err := a.read()
	if err != nil {
		return nil, false, err
	}
	for _, r := range d.Projects {
		if r.Path == c {
			m := maps.Clone(r.Servers)
			if m == nil {
				m = map[string]string{}
			}
			return m, true, nil
		}
	}
	return nil, false, nil
}

// SetApprovals replaces dir's record with servers (name → fingerprint;
// nil or empty records a folder approved with no servers).
func (a *MCPApprovals) SetApprovals(dir string, servers map[string]string) error {
	c, err := Canonical(dir)
	if err != nil {
		return err
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	rec := MCPApprovalRecord{Path: c, ApprovedAt: now().UTC(), Servers: maps.Clone(servers)}
	if rec.Servers == nil {
		rec.Servers = map[string]string{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	d, err := a.read()
	if err != nil {
		return err
	}
	d.Projects = slices.DeleteFunc(d.Projects, func(r MCPApprovalRecord) bool { return r.Path == c })
	d.Projects = append(d.Projects, rec)
	slices.SortFunc(d.Projects, func(x, y MCPApprovalRecord) int { return strings.Compare(x.Path, y.Path) })
	return writeJSON(a.Path, d)
}

// Forget removes dir's record: its servers need approval again (in a
// trusted folder, the next start approves what is configured then).
func (a *MCPApprovals) Forget(dir string) error {
	c, err := Canonical(dir)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	d, err := a.read()
	if err != nil {
		return err
	}
	n := len(d.Projects)
	d.Projects = slices.DeleteFunc(d.Projects, func(r MCPApprovalRecord) bool { return r.Path == c })
	if len(d.Projects) == n {
		return nil
	}
	return writeJSON(a.Path, d)
}
