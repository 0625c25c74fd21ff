//go:build !unix

package search

import "time"

func processCPU() (cpu, sys time.Duration, ok bool) { return 0, 0, false }
