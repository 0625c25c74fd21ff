//go:build !unix

package benchcpu

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
