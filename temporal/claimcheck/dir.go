package claimcheck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Dir is a [Store] in a directory of the filesystem: a blob is the file
// sha256/<first two hex digits>/<the other 62>. Writes go to a temporary
// file in the same directory, are synced and renamed into place, so a
// reader sees a whole blob or none; several processes (the workers of a
// machine, or of machines sharing a mount with atomic rename) may share one
// directory. It also implements [Sweeper].
type Dir struct {
	root string
	now  func() time.Time
}

var (
	_ Store   = (*Dir)(nil)
	_ Sweeper = (*Dir)(nil)
)

// OpenDir returns the store in path, creating the directory (mode 0700:
// the blobs are the runs' tool outputs and files) if it does not exist.
func OpenDir(path string) (*Dir, error) {
	if path == "" {
		return nil, errors.New("claimcheck: the blob directory is empty")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("claimcheck: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(abs, "sha256"), 0o700); err != nil {
		return nil, fmt.Errorf("claimcheck: blob directory: %w", err)
	}
	return &Dir{root: abs, now: time.Now}, nil
}

// Path is the store's directory.
func (d *Dir) Path() string { return d.root }

func (d *Dir) file(sum Sum) string {
	h := sum.String()
	return filepath.Join(d.root, "sha256", h[:2], h[2:])
}

// Put implements [Store]. A blob already present (of the right size) is
// not written again; its modification time is refreshed, which tells
// [Prune] it is in use.
func (d *Dir) Put(ctx context.Context, sum Sum, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	path := d.file(sum)
	if fi, err := os.Stat(path); err == nil && fi.Size() == int64(len(data)) {
		now := d.now()
		_ = os.Chtimes(path, now, now) // best effort: a read-only store still works
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("claimcheck: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("claimcheck: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("claimcheck: write blob sha256:%s: %w", sum, err)
	}
	if df, err := os.Open(dir); err == nil {
		df.Sync() // the rename survives a crash of the machine
		df.Close()
	}
	return nil
}

// Get implements [Store].
func (d *Dir) Get(ctx context.Context, sum Sum) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(d.file(sum))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s (every worker, serve and client of the runs must use the same blob store)", ErrNotFound, d.root)
	}
	return b, err
}

// Blobs implements [Sweeper]: the blobs in the directory, in no particular
// order. Temporary files of writes in progress are not listed.
func (d *Dir) Blobs(ctx context.Context) iter.Seq2[BlobInfo, error] {
	return func(yield func(BlobInfo, error) bool) {
		top := filepath.Join(d.root, "sha256")
		fans, err := os.ReadDir(top)
		if err != nil {
			yield(BlobInfo{}, fmt.Errorf("claimcheck: %w", err))
			return
		}
		for _, fan := range fans {
			if !fan.IsDir() || len(fan.Name()) != 2 {
				continue
			}
			if err := ctx.Err(); err != nil {
				yield(BlobInfo{}, err)
				return
			}
			ents, err := os.ReadDir(filepath.Join(top, fan.Name()))
			if err != nil {
				if !yield(BlobInfo{}, fmt.Errorf("claimcheck: %w", err)) {
					return
				}
				continue
			}
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".") {
					continue
				}
				sum, err := ParseSum(fan.Name() + e.Name())
				if err != nil {
					continue // not a blob
				}
				fi, err := e.Info()
				if err != nil {
					continue // removed meanwhile
				}
				if !yield(BlobInfo{Sum: sum, Size: fi.Size(), Used: fi.ModTime()}, nil) {
					return
				}
			}
		}
	}
}

// RemoveTemp removes the temporary files of writes that started before
// before (a writer that crashed mid-write leaves one) and returns how many.
func (d *Dir) RemoveTemp(ctx context.Context, before time.Time) (int, error) {
	files, err := filepath.Glob(filepath.Join(d.root, "sha256", "??", ".tmp-*"))
	if err != nil {
		return 0, fmt.Errorf("claimcheck: %w", err)
	}
	n := 0
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if fi, err := os.Stat(f); err == nil && fi.ModTime().Before(before) && os.Remove(f) == nil {
			n++
		}
	}
	return n, nil
}

// Delete implements [Sweeper]; deleting a missing blob succeeds.
func (d *Dir) Delete(ctx context.Context, sum Sum) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Remove(d.file(sum)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("claimcheck: %w", err)
	}
	return nil
}
