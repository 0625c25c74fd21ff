package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/store"
)

// TestQuickCheckRefusesCorruptPage: a damaged page inside the database is
// found by QuickCheck (or refused by the open itself).
func TestQuickCheckRefusesCorruptPage(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "g.db")
	st, err := store.OpenSQLite(ctx, db, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		data, _ := json.Marshal(map[string]string{"pad": strings.Repeat("x", 200)})
		if _, err := st.CreateRun(ctx, store.RunRecord{ID: fmt.Sprintf("r%d", i), Status: "succeeded", Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.QuickCheck(ctx); err != nil {
		t.Fatalf("a sound database: %v", err)
	}
	st.Close()
	os.Remove(db + "-wal")
	os.Remove(db + "-shm")
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	// Garbage over a page in the middle of the runs table.
	if _, err := f.WriteAt([]byte(strings.Repeat("\xff\x00garbage", 400)), fi.Size()/2/4096*4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, err = store.OpenSQLite(ctx, db, store.SQLiteOptions{})
	if err == nil {
		defer st.Close()
		err = st.QuickCheck(ctx)
	}
	if err == nil {
		t.Fatal("a corrupt page was not noticed")
	}
	t.Logf("refused: %v", err)
}
