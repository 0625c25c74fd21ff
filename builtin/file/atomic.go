package file

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// writeAtomic replaces (or creates) path with data: a temporary file in the
// same directory, written, synced, given mode, then renamed over path, and
// the directory synced (best effort). On any failure the temporary file is
// removed and path is untouched. wrap, if not nil, wraps the temporary
// file's writer (the fault seam of tests).
func writeAtomic(path string, data []byte, mode fs.FileMode, wrap func(io.Writer) io.Writer) (err error) {
	dir, base := filepath.Split(path)
	tmp, err := os.CreateTemp(dir, "."+base+".gantry-*.tmp")
	if err != nil {
		return fmt.Errorf("create a temporary file next to %s: %w", path, err)
	}
	name := tmp.Name()
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(name)
		}
	}()
	var w io.Writer = tmp
	if wrap != nil {
		w = wrap(tmp)
	}
	n, err := w.Write(data)
	if err == nil && n < len(data) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("write %s: %w (the original file is unchanged)", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w (the original file is unchanged)", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("chmod %s: %w (the original file is unchanged)", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w (the original file is unchanged)", path, err)
	}
	if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("replace %s: %w (the original file is unchanged)", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: not every file system syncs directories
		d.Close()
	}
	return nil
}

// loadForChange reads the file at path (which must be regular and at most
// maxSize bytes) for Write, Edit or NotebookEdit. exists is false (and err
// nil) when there is no file.
func loadForChange(path string, maxSize int64) (content []byte, info fs.FileInfo, exists bool, err error) {
	f, info, err := openRegular(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, false, nil
		}
		return nil, nil, false, err
	}
	defer f.Close()
	if info.Size() > maxSize {
		return nil, nil, true, fmt.Errorf("%s is %s, over the %s limit of the file-changing tools", path, humanSize(info.Size()), humanSize(maxSize))
	}
	content, err = io.ReadAll(io.LimitReader(f, maxSize+1))
	if err != nil {
		return nil, nil, true, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(content)) > maxSize {
		return nil, nil, true, fmt.Errorf("%s grew past the %s limit of the file-changing tools", path, humanSize(maxSize))
	}
	return content, info, true, nil
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
