package file

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"

	"github.com/gantry-dev/gantry/internal/safefs"
	"github.com/gantry-dev/gantry/tool"
)

// changer holds what Write, Edit and NotebookEdit share.
type changer struct{ opts Options }

// target is a file about to be changed, loaded under its write lock.
type target struct {
	path    string // the resolved path as the model named it
	key     string // the checked file: state key, lock key and write target
	pl      *place // where key is opened and written, links refused
	content []byte
	info    fs.FileInfo
	exists  bool
	unlock  func()
}

// release unlocks t and closes its place.
func (t *target) release() {
	t.pl.close()
	t.unlock()
}

// load resolves p, takes its write lock and loads the file. The caller must
// call t.release.
func (c *changer) load(ctx context.Context, env *tool.Env, p string) (*target, error) {
	path, err := resolvePath(envWorkDir(env), p)
	if err != nil {
		return nil, err
	}
	if envFiles(env) == nil {
		return nil, errNoFileStates
	}
	key := targetOf(env, p, path)
	unlock, err := c.opts.Locks.Lock(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("waiting to write %s: %w", path, err)
	}
	pl, err := openPlace(env, key)
	if err != nil {
		unlock()
		return nil, err
	}
	content, info, exists, err := loadForChange(pl, path, c.opts.MaxEditSize)
	if err != nil {
		pl.close()
		unlock()
		return nil, err
	}
	return &target{path: path, key: key, pl: pl, content: content, info: info, exists: exists, unlock: unlock}, nil
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
// new state. Directories are created and the file replaced beneath t's
// root without following any symbolic link.
func (c *changer) commit(env *tool.Env, t *target, data []byte) error {
	mode := fs.FileMode(0o644)
	if t.exists {
		mode = t.info.Mode().Perm()
	} else if dir := path.Dir(t.pl.rel); dir != "." {
		if err := t.pl.root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create the parent directories of %s: %w", t.path, err)
		}
	}
	info, err := t.pl.root.WriteFile(t.pl.rel, data, mode, safefs.WriteOptions{Journal: c.opts.journal.get(), Wrap: c.opts.wrapTemp})
	if err != nil {
		return fmt.Errorf("%w (the original file is unchanged)", err)
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
