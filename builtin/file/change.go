package file

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gantry-dev/gantry/tool"
)

// changer holds what Write, Edit and NotebookEdit share.
type changer struct{ opts Options }

// target is a file about to be changed, loaded under its write lock.
type target struct {
	path    string // the resolved path as the model named it
	key     string // the real path: state key, lock key and write target
	content []byte
	info    fs.FileInfo
	exists  bool
	unlock  func()
}

// load resolves p, takes its write lock and loads the file. The caller must
// call t.unlock.
func (c *changer) load(ctx context.Context, env *tool.Env, p string) (*target, error) {
	path, err := resolvePath(envWorkDir(env), p)
	if err != nil {
		return nil, err
	}
	if envFiles(env) == nil {
		return nil, errNoFileStates
	}
	key := realPath(path)
	unlock, err := c.opts.Locks.Lock(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("waiting to write %s: %w", path, err)
	}
	content, info, exists, err := loadForChange(key, c.opts.MaxEditSize)
	if err != nil {
		unlock()
		return nil, err
	}
	if !exists {
		// A dangling symbolic link: do not replace the link with a file.
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			unlock()
			return nil, fmt.Errorf("%s is a symbolic link to a missing file; create its target first or remove the link", path)
		}
	}
	return &target{path: path, key: key, content: content, info: info, exists: exists, unlock: unlock}, nil
}

// fresh checks that t was read in this session (wholly, if whole) and is
// unchanged since.
func (c *changer) fresh(env *tool.Env, t *target, whole bool) error {
	st, err := requireRead(env.Files, t.key, whole)
	if err != nil {
		return err
	}
	return checkFresh(t.path, st, t.info, t.content)
}

// commit writes data to t atomically (keeping the mode of an existing file;
// 0644 for a new one, with its parent directories created) and records the
// new state.
func (c *changer) commit(env *tool.Env, t *target, data []byte) error {
	mode := fs.FileMode(0o644)
	if t.exists {
		mode = t.info.Mode().Perm()
	} else if err := os.MkdirAll(filepath.Dir(t.key), 0o755); err != nil {
		return fmt.Errorf("create the parent directories of %s: %w", t.path, err)
	}
	if err := writeAtomic(t.key, data, mode, c.opts.wrapTemp); err != nil {
		return err
	}
	info, err := os.Stat(t.key)
	if err != nil {
		return fmt.Errorf("stat %s after writing: %w", t.path, err)
	}
	env.Files.Put(writtenState(t.key, info, data, c.opts.Now()))
	return nil
}

// changed is the result of a successful change: msg for the model, the
// summary and the unified diff (escaped) for the display.
func changed(msg, diff string) *tool.Result {
	display := EscapeDisplay(msg)
	if diff != "" {
		display += "\n" + EscapeDisplay(diff)
	}
	return &tool.Result{Content: []tool.Content{tool.Text(msg)}, Display: []tool.Content{tool.Text(display)}}
}

const utf8BOM = "\xef\xbb\xbf"

// lineEnding returns "\r\n" if most line breaks of b are CRLF, else "\n".
func lineEnding(b []byte) string {
	crlf := bytes.Count(b, []byte("\r\n"))
	lf := bytes.Count(b, []byte("\n")) - crlf
	if crlf > 0 && crlf >= lf {
		return "\r\n"
	}
	return "\n"
}
