//go:build !unix

package grep

import "time"

func processCPU() (cpu, sys time.Duration, ok bool) { return 0, 0, false }
