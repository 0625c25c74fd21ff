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

func restrictSelf(*Policy, int) error { return errNotLinux }
