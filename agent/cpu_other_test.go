//go:build !unix

package agent

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
