//go:build !unix

package tool

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
