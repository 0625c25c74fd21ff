package store

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of what the stores accept (bad input is a clear error, never a
// silently truncated record).
const (
	MaxSubjectLen     = 500
	MaxTextLen        = 100_000 // descriptions, messages
	MaxTodos          = 200
	MaxMetadataKeys   = 100
	MaxMembers        = 32
	maxKeyLen         = 200
	maxDependencyEdge = 1000
)

func errorsf(base error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", base, fmt.Sprintf(format, args...))
}

func checkKey(what, k string) error {
	if k == "" {
		return errorsf(ErrInvalid, "%s is empty", what)
	}
	if len(k) > maxKeyLen || !utf8.ValidString(k) || strings.ContainsRune(k, 0) {
		return errorsf(ErrInvalid, "%s is not a valid name", what)
	}
	return nil
}

func checkText(what, s string, max int) error {
	if len(s) > max {
		return errorsf(ErrInvalid, "%s is %d bytes long (at most %d)", what, len(s), max)
	}
	if !utf8.ValidString(s) {
		return errorsf(ErrInvalid, "%s is not valid UTF-8", what)
	}
	return nil
}

func checkNewTask(t NewTask) error {
	if strings.TrimSpace(t.Subject) == "" {
		return errorsf(ErrInvalid, "subject is empty")
	}
	if err := checkText("subject", t.Subject, MaxSubjectLen); err != nil {
		return err
	}
	if err := checkText("description", t.Description, MaxTextLen); err != nil {
		return err
	}
	if err := checkText("activeForm", t.ActiveForm, MaxSubjectLen); err != nil {
		return err
	}
	if len(t.Metadata) > MaxMetadataKeys {
		return errorsf(ErrInvalid, "metadata has %d keys (at most %d)", len(t.Metadata), MaxMetadataKeys)
	}
	return nil
}

// applyPatch applies the scalar fields and metadata of p to t (edges are
// applied by the caller after the cycle check). It validates p.
func applyPatch(t *Task, p TaskPatch) error {
	if p.Subject != nil {
		if strings.TrimSpace(*p.Subject) == "" {
			return errorsf(ErrInvalid, "subject is empty")
		}
		if err := checkText("subject", *p.Subject, MaxSubjectLen); err != nil {
			return err
		}
		t.Subject = *p.Subject
	}
	if p.Description != nil {
		if err := checkText("description", *p.Description, MaxTextLen); err != nil {
			return err
		}
		t.Description = *p.Description
	}
	if p.ActiveForm != nil {
		if err := checkText("activeForm", *p.ActiveForm, MaxSubjectLen); err != nil {
			return err
		}
		t.ActiveForm = *p.ActiveForm
	}
	if p.Status != nil {
		if !p.Status.Valid() {
			return errorsf(ErrInvalid, "unknown status %q (want pending, in_progress, completed or deleted)", *p.Status)
		}
		t.Status = *p.Status
	}
	if p.Owner != nil {
		if err := checkText("owner", *p.Owner, maxKeyLen); err != nil {
			return err
		}
		t.Owner = *p.Owner
	}
	if p.Metadata != nil {
		m := maps.Clone(t.Metadata)
		if m == nil {
			m = map[string]any{}
		}
		for k, v := range p.Metadata {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		if len(m) > MaxMetadataKeys {
			return errorsf(ErrInvalid, "metadata would have %d keys (at most %d)", len(m), MaxMetadataKeys)
		}
		if len(m) == 0 {
			m = nil
		}
		t.Metadata = m
	}
	return nil
}

// edge is a dependency: From blocks To.
type edge struct{ From, To string }

// patchEdges returns the edges p adds to task id.
func patchEdges(id string, p TaskPatch) []edge {
	var out []edge
	for _, b := range p.AddBlocks {
		out = append(out, edge{id, b})
	}
	for _, b := range p.AddBlockedBy {
		out = append(out, edge{b, id})
	}
	return out
}

// checkEdges validates new dependency edges against the existing ones:
// ids must exist (exists), no self edge, no cycle. It returns the edges
// that are really new.
func checkEdges(existing, add []edge, exists func(string) bool) ([]edge, error) {
	if len(existing)+len(add) > maxDependencyEdge {
		return nil, errorsf(ErrInvalid, "too many dependencies in this list (at most %d)", maxDependencyEdge)
	}
	succ := map[string][]string{}
	have := map[edge]bool{}
	for _, e := range existing {
		succ[e.From] = append(succ[e.From], e.To)
		have[e] = true
	}
	var fresh []edge
	for _, e := range add {
		if e.From == e.To {
			return nil, errorsf(ErrCycle, "task %s cannot block itself", e.From)
		}
		for _, id := range []string{e.From, e.To} {
			if !exists(id) {
				return nil, errorsf(ErrNotFound, "task %s", id)
			}
		}
		if have[e] {
			continue
		}
		// Adding From→To closes a cycle iff To already reaches From.
		if path := reach(succ, e.To, e.From); path != nil {
			return nil, errorsf(ErrCycle, "task %s blocks %s, so %s cannot block %s", e.To, strings.Join(path, " → "), e.From, e.To)
		}
		succ[e.From] = append(succ[e.From], e.To)
		have[e] = true
		fresh = append(fresh, e)
	}
	return fresh, nil
}

// reach returns a path from a to b through succ (a excluded), or nil.
func reach(succ map[string][]string, a, b string) []string {
	prev := map[string]string{a: ""}
	queue := []string{a}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, m := range succ[n] {
			if _, seen := prev[m]; seen {
				continue
			}
			prev[m] = n
			if m == b {
				var path []string
				for x := m; x != a; x = prev[x] {
					path = append(path, x)
				}
				slices.Reverse(path)
				return path
			}
			queue = append(queue, m)
		}
	}
	return nil
}

// idLess orders task ids numerically when both are numbers.
func idLess(a, b string) int {
	x, e1 := strconv.ParseInt(a, 10, 64)
	y, e2 := strconv.ParseInt(b, 10, 64)
	if e1 == nil && e2 == nil {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return strings.Compare(a, b)
}

func checkTeam(t Team) error {
	if err := checkKey("team name", t.Name); err != nil {
		return err
	}
	if err := checkText("team description", t.Description, MaxTextLen); err != nil {
		return err
	}
	if len(t.Members) > MaxMembers {
		return errorsf(ErrInvalid, "a team has at most %d members", MaxMembers)
	}
	seen := map[string]bool{}
	for _, m := range t.Members {
		if err := checkMember(m); err != nil {
			return err
		}
		if seen[m.Name] {
			return errorsf(ErrInvalid, "member name %q is used twice", m.Name)
		}
		seen[m.Name] = true
	}
	return nil
}

// checkMember checks one member's name and texts.
func checkMember(m Member) error {
	if err := checkKey("member name", m.Name); err != nil {
		return err
	}
	if m.Name == "*" || m.Name == LeadMailbox {
		return errorsf(ErrInvalid, "member name %q is reserved", m.Name)
	}
	return checkText("member note", m.Note, MaxTextLen)
}

// addMember checks that m can join t and returns m with its defaults.
func addMember(t Team, m Member, now time.Time) (Member, error) {
	if err := checkMember(m); err != nil {
		return Member{}, err
	}
	if !t.Active() {
		return Member{}, errorsf(ErrNotFound, "team %s (deleted)", t.Name)
	}
	if _, ok := t.Member(m.Name); ok {
		return Member{}, errorsf(ErrInvalid, "member name %q is used in team %s", m.Name, t.Name)
	}
	if len(t.Members) >= MaxMembers {
		return Member{}, errorsf(ErrInvalid, "team %s is full: a team has at most %d members", t.Name, MaxMembers)
	}
	if m.Status == "" {
		m.Status = MemberStarting
	}
	m.UpdatedAt = now
	return m, nil
}

// LeadMailbox is the member name under which a team's lead receives
// messages.
const LeadMailbox = "lead"

// MailboxName is the mailbox of a member (or [LeadMailbox]) of a team.
func MailboxName(team, member string) string { return "team/" + team + "/" + member }
