//go:build unix

package grep

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) of this process and of the
// children it waited for (ripgrep, for the rg engine), and the system part
// of it.
func processCPU() (cpu, sys time.Duration, ok bool) {
	var self, kids syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids) != nil {
		return 0, 0, false
	}
	sys = time.Duration(self.Stime.Nano() + kids.Stime.Nano())
	return time.Duration(self.Utime.Nano()+kids.Utime.Nano()) + sys, sys, true
}
