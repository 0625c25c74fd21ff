//go:build !unix

package search

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
