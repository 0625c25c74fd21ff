package file

import (
	"context"
	"sync"
)

// Locks serialises writes to one path across concurrent calls. The zero value
// is not usable; call [NewLocks]. A Locks is safe for concurrent use and holds
// memory only for paths being written.
type Locks struct {
	mu sync.Mutex
	m  map[string]*pathLock
}

type pathLock struct {
	ch   chan struct{} // a token: full means locked
	refs int
}

// NewLocks returns an empty set of per-path locks.
func NewLocks() *Locks { return &Locks{m: make(map[string]*pathLock)} }

// Lock locks path, waiting until it is free or ctx is done. On success it
// returns the function that unlocks it.
func (l *Locks) Lock(ctx context.Context, path string) (unlock func(), err error) {
	l.mu.Lock()
	pl := l.m[path]
	if pl == nil {
		pl = &pathLock{ch: make(chan struct{}, 1)}
		l.m[path] = pl
	}
	pl.refs++
	l.mu.Unlock()

	release := func() {
		l.mu.Lock()
		pl.refs--
		if pl.refs == 0 {
			delete(l.m, path)
		}
		l.mu.Unlock()
	}
	select {
	case pl.ch <- struct{}{}:
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-pl.ch
			release()
		})
	}, nil
}
