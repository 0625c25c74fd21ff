package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestFullDatabaseIsBusy: a database that cannot grow (its disk full;
// here its page limit reached) gives ErrBusy, as does a write lock held
// beyond the busy timeout; lease renewal (on its own connection) works
// once the lock is free.
func TestFullDatabaseIsBusy(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "g.db")
	raw, err := sql.Open("sqlite", "file:"+db+"?_pragma=max_page_count(8)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	if _, err := raw.Exec(`CREATE TABLE t (x TEXT)`); err != nil {
		t.Fatal(err)
	}
	var full error
	for i := 0; i < 1000 && full == nil; i++ {
		_, full = raw.Exec(`INSERT INTO t VALUES (?)`, string(make([]byte, 2000)))
	}
	if full == nil || !errors.Is(busy(full), ErrBusy) {
		t.Fatalf("full database: %v", full)
	}

	st, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "s.db"), SQLiteOptions{BusyTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// This process's write lock held (a long writer): another write gives
	// up after the busy timeout instead of queueing without bound.
	release := make(chan struct{})
	held := make(chan struct{})
	go st.write(ctx, func(*sql.Tx) error { close(held); <-release; return nil })
	<-held
	t0 := time.Now()
	err = st.write(ctx, func(*sql.Tx) error { return nil })
	if !errors.Is(err, ErrBusy) || time.Since(t0) > 5*time.Second {
		t.Fatalf("queued write: %v after %s", err, time.Since(t0))
	}
	close(release)
	if err := st.RenewLeases(ctx, "me", time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
}
