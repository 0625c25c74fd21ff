package store_test

import (
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return new(store.Memory) })
}

func openSQLite(t testing.TB) *store.SQLite {
	t.Helper()
	s, err := store.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "g.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSQLiteConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openSQLite(t) })
}

func TestLazyConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return store.LazySQLite(filepath.Join(t.TempDir(), "sub", "g.db"), store.SQLiteOptions{})
	})
}
