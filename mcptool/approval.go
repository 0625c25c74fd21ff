package mcptool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Fingerprint returns a fingerprint of a server definition: a hash of its
// type (inferred when empty, as [ParseConfig] does), command, args, env
// names and values, url and header names and values, in a canonical form
// ("v1:sha256:<hex>"). Source and Fingerprint are not part of it.
//
// [ParseConfig] fingerprints each server as written, before ${VAR}
// expansion: that is what a repository's .mcp.json controls. A change of
// the user's environment (a rotated token, another $HOME) does not change
// the fingerprint, and no secret taken from the environment is hashed into
// the approval record.
func Fingerprint(sc ServerConfig) string {
	typ := sc.Type
	if typ == "" {
		switch {
		case sc.Command != "":
			typ = TypeStdio
		case sc.URL != "":
			typ = TypeHTTP
		}
	}
	args := sc.Args
	if args == nil {
		args = []string{}
	}
	canon := struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		// Omitted when false, so definitions from before the key keep
		// their fingerprint; turning the sandbox off asks again.
		Sandbox bool `json:"sandbox,omitempty"`
	}{typ, sc.Command, args, nonNil(sc.Env), sc.URL, nonNil(sc.Headers), sc.Sandbox}
	// encoding/json writes map keys sorted: the form is canonical.
	b, err := json.Marshal(canon)
	if err != nil {
		panic(fmt.Sprintf("mcptool: fingerprint: %v", err)) // strings only: cannot fail
	}
	sum := sha256.Sum256(b)
	return "v1:sha256:" + hex.EncodeToString(sum[:])
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// Approval is what an approval check says of one project server.
type Approval string

const (
	// Approved: the server's definition is the one the user approved.
	Approved Approval = "approved"
	// ApprovalNew: the project's servers were approved, but not this one
	// (it was added since).
	ApprovalNew Approval = "new"
	// ApprovalChanged: the server's definition differs from the approved
	// one.
	ApprovalChanged Approval = "changed"
)

// Message says why a server that is not approved was not started, and
// what to do about it.
func (a Approval) Message() string {
	switch a {
	case Approved:
		return "approved"
	case ApprovalNew:
		return "added since approval: run with --trust to approve"
	case ApprovalChanged:
		return "changed since approval: run with --trust to approve"
	}
	return string(a) + ": run with --trust to approve"
}

// Approver decides which servers of the project file of dir may start. It
// gets every server of the file by name (Fingerprint set, values expanded)
// — an empty map when the folder has no project file — and returns the
// state of each; a server it gives no state is not approved
// ([ApprovalNew]). It may record approvals as it goes. See [StoreApprover].
type Approver func(dir string, servers map[string]ServerConfig) (map[string]Approval, error)

// ApprovalStore keeps, per project folder, the fingerprints of the servers
// the user approved. settings.MCPApprovals implements it.
type ApprovalStore interface {
	// Approvals returns dir's approved fingerprints by server name, and
	// whether dir has a record at all.
	Approvals(dir string) (map[string]string, bool, error)
	// SetApprovals replaces dir's record.
	SetApprovals(dir string, fingerprints map[string]string) error
}

// StoreApprover returns the [Approver] of the CLI (docs/mcp.md, approval of project servers: a
// server whose definition changed after approval needs approval again):
//
//   - reapprove (the user said so: --trust, or yes at a prompt): every
//     server is approved and dir's record replaced by their fingerprints;
//   - dir has no record yet (the first start since the folder was
//     trusted): the same — trusting the folder approved what it held;
//   - otherwise a server is [Approved] when its fingerprint is the recorded
//     one, [ApprovalChanged] when it differs, [ApprovalNew] when the record
//     does not name it. The record is not changed.
//
// A folder with no project file is recorded with no servers, so a
// .mcp.json added to a trusted folder later needs approval too.
func StoreApprover(store ApprovalStore, reapprove bool) Approver {
	return func(dir string, servers map[string]ServerConfig) (map[string]Approval, error) {
		out := make(map[string]Approval, len(servers))
		rec, ok, err := store.Approvals(dir)
		if err != nil {
			return nil, err
		}
		if reapprove || !ok {
			fps := make(map[string]string, len(servers))
			for name, sc := range servers {
				fps[name] = sc.Fingerprint
				out[name] = Approved
			}
			if ok && maps.Equal(rec, fps) {
				return out, nil // nothing to record
			}
			if err := store.SetApprovals(dir, fps); err != nil {
				return nil, fmt.Errorf("recording MCP server approvals: %w", err)
			}
			return out, nil
		}
		for name, sc := range servers {
			switch fp, known := rec[name]; {
			case !known:
				out[name] = ApprovalNew
			case fp != sc.Fingerprint:
				out[name] = ApprovalChanged
			default:
				out[name] = Approved
			}
		}
		return out, nil
	}
}

// StateUnapproved is the state of a project server held back by the
// approval check ([ConfigFile.Held]): it was never started.
const StateUnapproved State = "unapproved"

// HeldStatuses returns a status for each held server (State
// [StateUnapproved], Err its [Approval.Message]), sorted by name, for a
// listing next to [Manager.Servers].
func (c *ConfigFile) HeldStatuses() []ServerStatus {
	if c == nil {
		return nil
	}
	var out []ServerStatus
	for _, name := range slices.Sorted(maps.Keys(c.Held)) {
		h := c.Held[name]
		out = append(out, ServerStatus{Name: name, Type: h.Server.Type, Source: h.Server.Source, State: StateUnapproved, Err: h.Approval.Message()})
	}
	return out
}
