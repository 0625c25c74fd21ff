//go:build !linux

package procenv

// Start is [Hide] on this platform: the credentials leave the environment
// that children inherit, but the process's own initial environment is not
// rewritten (see docs/rough-edges.md).
func Start() (*Secrets, error) { return Hide() }
