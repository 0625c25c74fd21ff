package safefs

import "testing"

// forceWalk makes the test use the O_NOFOLLOW walk instead of openat2.
func forceWalk(t testing.TB) {
	old := openat2State.Load()
	openat2State.Store(2)
	t.Cleanup(func() { openat2State.Store(old) })
}
