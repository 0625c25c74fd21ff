//go:build !unix

package executor

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
