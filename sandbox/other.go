//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
)

var errNotLinux = errors.New("the Landlock backend needs Linux")

// Landlock is the Landlock + seccomp backend; it needs Linux.
type Landlock struct {
	Helper  string
	Cgroups string
}

// MinLandlockABI is the oldest Landlock ABI the backend uses.
const MinLandlockABI = 4

// Name implements [Backend].
func (l *Landlock) Name() string { return "landlock" }

// Check reports that the backend needs Linux.
func (l *Landlock) Check() error { return errNotLinux }

// Wrap fails: the backend needs Linux.
func (l *Landlock) Wrap(*exec.Cmd, *Policy) (func(), error) { return nil, errNotLinux }

// CgroupCheck reports that cgroups need Linux.
func CgroupCheck() error { return errNotLinux }

func restrictSelf(*Policy, int, bool) error { return errNotLinux }

// filterOptions pick the variant of the seccomp filter (Linux only).
type filterOptions struct {
	IPRules      bool    `json:"ip_rules,omitempty"`
	Network      Network `json:"network"`
	LocalBinding bool    `json:"local_binding,omitempty"`
	UnixSockets  bool    `json:"unix_sockets,omitempty"`
}

func loadSeccomp(filterOptions) error           { return errNotLinux }
func filterBytes(filterOptions) ([]byte, error) { return nil, errNotLinux }
func hardenBridge() error                       { return errNotLinux }
