package procenv

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Protect makes the process non-dumpable (prctl PR_SET_DUMPABLE 0): its
// /proc/<pid> files become root's, so other processes of the same user —
// including every process Gantry's tools start, which are dumpable again
// after their own exec — can read neither /proc/<pid>/environ (the
// environment as it was at exec, credentials included), nor cmdline-adjacent
// state such as /proc/<pid>/mem, nor attach with ptrace. Core dumps of the
// process are disabled too.
func Protect() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("procenv: prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}

// Protected reports whether the process is non-dumpable.
func Protected() bool {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return err == nil && v == 0
}
