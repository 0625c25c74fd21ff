package permission

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/internal/shellparse"
)

// Walking directories a command reads whole.
//
// A recursion that follows symbolic links (grep -R, rg -L, find -L, cp -rL,
// du -L, ls -RL, diff -r) reads whatever the links below its directory
// point at. The rule: with a scoped Read or Edit deny rule in force it
// always asks (operandDenied: the links may lead to denied files, and
// they can change before the command runs); otherwise it is approved
// without a prompt only when a walk of the directory — following the
// links, as the command will — finds no link that leads outside the
// working directories (both forms) and ends within maxWalk entries. A
// larger tree asks.
//
// A directory named by a word of a command the model does not know may be
// read whole (tar, zip): with deny rules in force it is walked for files
// they cover (treeDenied).

// maxWalk bounds the entries one walk visits; a larger tree is not
// checked (ask).
const maxWalk = 20_000

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// followStaysInside walks the directory f, following symbolic links as a
// following recursion does, and reports where it leaves the working
// directories (why, false), or that the tree is too large to check.
func (c *call) followStaysInside(f pathForms) (string, bool) {
	if !f.both(c.inside) {
		return "reads outside the working directories: " + f.lexical, false
	}
	if !isDir(f.resolved) {
		return "", true
	}
	visited := map[string]bool{f.resolved: true}
	queue := []string{f.resolved}
	n := 0
	for len(queue) > 0 {
		dir := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // unreadable: the command cannot read it either
		}
		for _, d := range ents {
			if n++; n > maxWalk {
				return fmt.Sprintf("not understood: %s follows symbolic links below %s, which holds more than %d entries to check", "the command", f.lexical, maxWalk), false
			}
			p := filepath.Join(dir, d.Name())
			switch {
			case d.Type()&os.ModeSymlink != 0:
				t, ok := c.res.resolve(p)
				if !ok {
					return "reads outside the working directories: the link " + p + " cannot be resolved", false
				}
				if !c.inside(t) {
					return fmt.Sprintf("reads outside the working directories: it follows the link %s to %s", p, t), false
				}
				if !visited[t] && isDir(t) {
					visited[t] = true
					queue = append(queue, t)
				}
			case d.IsDir():
				if !visited[p] {
					visited[p] = true
					queue = append(queue, p)
				}
			}
		}
	}
	return "", true
}

// treeDenied walks the directory f (not following links, but checking
// where each link leads) for a file a deny rule covers; a tree larger
// than maxWalk counts as covered.
func (e *Engine) treeDenied(c *call, f pathForms, rules []*rule) (*rule, string) {
	type dir struct{ lexical, resolved string }
	queue := []dir{{f.lexical, f.resolved}}
	n := 0
	for len(queue) > 0 {
		d := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		ents, err := os.ReadDir(d.resolved)
		if err != nil {
			continue
		}
		for _, ent := range ents {
			if n++; n > maxWalk {
				return rules[0], fmt.Sprintf("more than %d entries (not all checked)", maxWalk)
			}
			pf := pathForms{lexical: filepath.Join(d.lexical, ent.Name()), resolved: filepath.Join(d.resolved, ent.Name())}
			if ent.Type()&os.ModeSymlink != 0 {
				if t, ok := c.res.resolve(pf.resolved); ok {
					pf.resolved = t
				}
			}
			for _, r := range rules {
				if e.pathMatches(c, r, pf, true) {
					return r, pf.lexical
				}
			}
			if ent.IsDir() {
				queue = append(queue, dir{pf.lexical, pf.resolved})
			}
		}
	}
	return nil, ""
}

// globsStable reports whether a glob operand of a command some of whose
// options open more files (shellparse.Path.OptionGlob) expands only to
// files: no match may start with "-" (it would be an option), and the
// line must not create files before the glob expands (only a line that
// otherwise only reads is decided on the matches seen now).
func (c *call) globsStable(matches []string) bool {
	for _, m := range matches {
		if strings.HasPrefix(filepath.Base(m), "-") {
			return false
		}
	}
	return c.readOnlyLine()
}

// maxList bounds the size of a file checked as a possible list of files.
const maxList = 1 << 20

// listDenied reads a file given to a command the model does not know as
// a possible list of files (tar -T, rsync --files-from, a response file):
// each NUL- or newline-separated entry is checked, as written from the
// command's directories, against the deny rules. Files over maxList bytes
// are not read (a limit of this best-effort check; the sandbox enforces
// Read denies whatever the analysis saw).
func (e *Engine) listDenied(c *call, f pathForms, bases []string, rules []*rule) (*rule, string) {
	fi, err := os.Stat(f.resolved)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxList || fi.Size() == 0 {
		return nil, ""
	}
	data, err := os.ReadFile(f.resolved)
	if err != nil {
		return nil, ""
	}
	for _, line := range strings.FieldsFunc(string(data), func(r rune) bool { return r == 0 || r == '\n' || r == '\r' }) {
		entry := strings.TrimSpace(line)
		if entry == "" || len(entry) > 4096 {
			continue
		}
		for _, b := range bases {
			a, err := absPath(entry, b, c.home)
			if err != nil {
				continue
			}
			for _, r := range rules {
				if e.pathMatches(c, r, pathForms{lexical: a, resolved: a}, true) {
					return r, entry
				}
			}
		}
	}
	return nil, ""
}

// readOnlyLine reports a line whose commands only read (or reach the
// network): nothing in it creates files before a later command looks.
func (c *call) readOnlyLine() bool {
	return c.shell.model.Class&^shellparse.Network == 0
}
