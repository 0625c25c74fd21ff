//go:build !linux

package procenv

// Protect does nothing on this platform: only [Hide]'s removal of the
// variables from the environment applies (see docs/rough-edges.md).
func Protect() error { return nil }

// Protected reports false on this platform.
func Protected() bool { return false }
