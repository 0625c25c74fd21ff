//go:build !linux

package main

// dropStartupPages is a no-op outside Linux (see resident_linux.go).
func dropStartupPages() (int, error) { return 0, nil }
