// Package benchcpu reports the CPU time a benchmark's process spends per
// operation, beside the wall time: on a machine shared with other work the
// wall time grows with the load, the CPU time much less.
package benchcpu

import (
	"testing"
	"time"
)

// Start notes the process's CPU time; the returned function, called when
// the benchmark's loop ends, reports the CPU time (user + system, every
// thread, the collector's included) per operation as "cpu-ns/op". Where
// the OS does not tell, it reports nothing.
func Start(b *testing.B) (stop func()) {
	c0, ok := cpuTime()
	return func() {
		c1, ok1 := cpuTime()
		if ok && ok1 && b.N > 0 {
			b.ReportMetric(float64((c1-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

// Now returns the CPU time the process has used so far (user + system,
// every thread, the collector's included) and whether the OS tells: for
// benchmarks that time a part of each operation.
func Now() (time.Duration, bool) { return cpuTime() }
