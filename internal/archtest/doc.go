// Package archtest holds the architecture test: the floors of
// docs/architecture.md, read from that page, checked against the imports of
// every package of the module. It has no code of its own; run it with
//
//	go test ./internal/archtest
package archtest
