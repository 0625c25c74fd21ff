package permission

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/internal/shellparse"
)

// Links, moves and copies of protected paths. A file that gets another
// name (shellparse.Path.Transfer: a hard or symbolic link, a move, a copy)
// is written through that name: a hard link to .git/config is
// .git/config, a moved .envrc leaves its place, a copy of a directory
// holding .git or .vscode creates them at the destination. So a Transfer
// of a protected path — or of a directory that holds one — is a write to
// a protected path, and is never approved without asking (outside
// bypass). Read deny rules bind Transfer sources as reads (operandDenied),
// recursively for a directory.

// maxTransferWalk bounds the entries looked at below a directory that is
// linked, moved or copied; a larger tree is taken to hold a protected
// path (ask).
const maxTransferWalk = 4096

// transferProtected reports a command that links, moves or copies a
// protected path or a directory holding one.
func (c *call) transferProtected(sc *shellparse.Cmd, bases []string, basesOK bool) (string, bool) {
	for _, list := range [][]shellparse.Path{sc.Reads, sc.Writes} {
		for _, p := range list {
			if !p.Transfer {
				continue
			}
			targets, ok := c.shellPath(p, bases, basesOK)
			if !ok {
				continue // unknown operands are asked for elsewhere
			}
			for _, t := range targets {
				if t.any(c.protected) {
					return fmt.Sprintf("%s links, moves or copies the protected path %s", sc.Name(), t.lexical), true
				}
				if inner, ok := c.holdsProtected(t.resolved); ok {
					return fmt.Sprintf("%s links, moves or copies %s, which holds the protected path %s", sc.Name(), t.lexical, inner), true
				}
			}
		}
	}
	return "", false
}

// holdsProtected reports a directory that holds a protected name at any
// depth (without following symbolic links), or that is too large to look
// through.
func (c *call) holdsProtected(dir string) (string, bool) {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return "", false
	}
	n := 0
	found := ""
	errStop := fs.SkipAll
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		n++
		if n > maxTransferWalk {
			found = fmt.Sprintf("(more than %d files below %s were not looked at)", maxTransferWalk, dir)
			return errStop
		}
		name := strings.ToLower(d.Name())
		if protectedDirNames[name] || protectedFileNames[name] || c.protected(p) {
			found = p
			return errStop
		}
		return nil
	})
	return found, found != ""
}
