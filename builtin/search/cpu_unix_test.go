//go:build unix

package search

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) of this process and of the
// children it waited for (ripgrep, for the rg engine).
func processCPU() (time.Duration, bool) {
	var self, kids syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids) != nil {
		return 0, false
	}
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + kids.Utime.Nano() + kids.Stime.Nano()), true
}
