package file

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/tool"
)

// resolvePath turns a model-given path into an absolute, cleaned path:
// "~" and "~/x" are the home directory, a relative path is relative to
// env.WorkDir. A NUL byte, an empty path, or a relative path without a
// working directory is an error.
func resolvePath(workDir, p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", errors.New("the path contains a NUL byte; pass a real file path")
	}
	if strings.TrimSpace(p) == "" {
		return "", errors.New("the path is empty; pass the file's absolute path or a path relative to the working directory")
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot expand ~: %w", err)
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		if workDir == "" {
			return "", fmt.Errorf("%q is relative and the session has no working directory; pass an absolute path", p)
		}
		p = filepath.Join(workDir, p)
	}
	p = filepath.Clean(p)
	if p == "/dev" || strings.HasPrefix(p, "/dev/") {
		return "", fmt.Errorf("%s is under /dev: device files are not read or written by the file tools", p)
	}
	return p, nil
}

// backfillPath is the observable-input backfill of the file tools
// (tool.Backfiller): hooks, permission checks, transcripts and UIs see the
// absolute path of a relative (or ~) one. The tool itself still gets the
// model's path and resolves it in the call's working directory.
func backfillPath(env *tool.Env, p *string) {
	if abs, err := resolvePath(envWorkDir(env), *p); err == nil {
		*p = abs
	}
}

// realPath returns p with symbolic links resolved, or p itself when it (or
// a parent) does not exist yet. File states and write locks are keyed by it,
// so a file reached through a link and through its target is one file.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	// A file that does not exist yet: resolve its directory.
	if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(r, filepath.Base(p))
	}
	return p
}

// errNotRegular is wrapped by checkRegular's errors for directories and
// special files.
var errNotRegular = errors.New("not a regular file")

func checkRegular(p string, info fs.FileInfo) error {
	switch {
	case info.IsDir():
		return fmt.Errorf("%w: %s is a directory. To list or find files use Glob (or ls through Bash)", errNotRegular, p)
	case info.Mode()&fs.ModeNamedPipe != 0:
		return fmt.Errorf("%w: %s is a named pipe (FIFO); only regular files can be read", errNotRegular, p)
	case info.Mode()&fs.ModeSocket != 0:
		return fmt.Errorf("%w: %s is a socket; only regular files can be read", errNotRegular, p)
	case info.Mode()&fs.ModeDevice != 0:
		return fmt.Errorf("%w: %s is a device; only regular files can be read", errNotRegular, p)
	case !info.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file (%v)", errNotRegular, p, info.Mode().Type())
	}
	return nil
}

// notExistHint turns a "no such file" error into a message that suggests a
// file of a similar name in the same directory.
func notExistHint(p string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("stat %s: %w", p, err)
	}
	msg := fmt.Sprintf("file does not exist: %s", p)
	if s := similarName(p); s != "" {
		msg += fmt.Sprintf(". Did you mean %s?", s)
	}
	return &notExistError{msg: msg}
}

// notExistError is a missing file's message that matches fs.ErrNotExist
// without repeating its text ("…: file does not exist").
type notExistError struct{ msg string }

func (e *notExistError) Error() string { return e.msg }
func (e *notExistError) Unwrap() error { return fs.ErrNotExist }

// similarName returns a file of p's directory whose name equals p's ignoring
// case, or has p's name without its extension, or "".
func similarName(p string) string {
	dir, base := filepath.Split(p)
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) > 10_000 {
		return ""
	}
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	for _, e := range entries {
		n := e.Name()
		if strings.EqualFold(n, base) || (stem != "" && strings.TrimSuffix(n, filepath.Ext(n)) == stem) {
			return filepath.Join(dir, n)
		}
	}
	return ""
}
