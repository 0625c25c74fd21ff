package file

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// loadForChange reads the place's file (which must be regular and at most
// maxSize bytes) for Write, Edit or NotebookEdit. exists is false (and err
// nil) when there is no file; a dangling symbolic link is an error. path
// is the name to report.
func loadForChange(pl *place, path string, maxSize int64) (content []byte, info fs.FileInfo, exists bool, err error) {
	f, info, err := openRegularAt(pl, path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errDanglingLink) {
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
