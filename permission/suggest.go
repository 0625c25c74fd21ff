package permission

import (
	"path/filepath"

	"github.com/gantry-dev/gantry/internal/shellparse"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/settings"
)

// Suggest returns allow rules that would let this call (and ones like it)
// run without asking: what a prompt offers as "always allow". The rules
// are as narrow as stays useful:
//
//   - Bash: for every simple command not yet approved, a two-word prefix
//     rule (Bash(npm run *)); for a script in the working directories the
//     script with any arguments (Bash(sh ./greet.sh *),
//     Bash(./scripts/test.sh *)); for commands no prefix rule approves
//     (runners like sudo, dangerous arguments, expansions, assignments, a
//     script outside), the exact command. A script the line itself writes
//     gets no rule (none would approve it);
//   - Read, Edit: the file's directory (./src/** inside the working
//     directory, //abs/dir/** outside);
//   - WebFetch: the host (WebFetch(domain:host));
//   - other tools: the bare tool name.
//
// It returns nil when nothing sensible can be suggested (a command that
// does not parse, a call blocked for safety reasons rules cannot lift).
func (e *Engine) Suggest(req *Request) []string {
	c, err := e.newCall(req)
	if err != nil || c.pathErr != nil {
		return nil
	}
	name := c.names[0]
	switch c.kind {
	case kindBash:
		return e.suggestBash(c)
	case kindRead, kindWrite:
		fam := "Read"
		if c.kind == kindWrite {
			fam = "Edit"
		}
		var out []string
		for _, fa := range c.paths {
			dir := fa.forms.lexical
			if st, err := statDir(dir); err != nil || !st {
				dir = filepath.Dir(dir)
			}
			var spec string
			if rel, err := filepath.Rel(c.workDir, dir); err == nil && settings.Within(dir, c.workDir) {
				spec = "./" + filepath.ToSlash(rel) + "/**"
				if rel == "." {
					spec = "./**"
				}
			} else {
				spec = "/" + filepath.ToSlash(dir) + "/**"
			}
			r := Rule{Tool: fam, Specifier: spec}.String()
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
		return out
	case kindWeb:
		if c.host == "" {
			return nil
		}
		return []string{Rule{Tool: "WebFetch", Specifier: "domain:" + strings.ToLower(c.host)}.String()}
	}
	return []string{name}
}

func (e *Engine) suggestBash(c *call) []string {
	a := c.shell
	if a.err != nil || a.script.HasCommandSubst || a.script.HasProcessSubst || a.script.Complex {
		return nil
	}
	var out []string
	add := func(r string) {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	for _, sc := range a.topCmds() {
		bases, basesOK := c.cmdBases(sc)
		if _, ok, _ := e.approveCmd(c, sc, bases, basesOK); ok {
			continue
		}
		r, ok := e.suggestCmd(c, sc, bases, basesOK)
		if !ok {
			return nil
		}
		add(r)
	}
	return out
}

// suggestCmd returns the allow rule that would approve one simple
// command: a two-word prefix rule, a script rule (scripts.go), or the
// exact command for what no wildcard approves. ok is false when no rule
// can (a critical destructive operation, a script the line itself
// writes).
func (e *Engine) suggestCmd(c *call, sc *shellparse.Cmd, bases []string, basesOK bool) (string, bool) {
	if _, bad := c.criticalDestroy(sc, bases, basesOK); bad {
		return "", false
	}
	if i, ok := scriptOf(sc); ok {
		if len(sc.Command.Assigns) == 0 {
			return e.scriptRule(c, sc, i, bases, basesOK)
		}
		if _, ok := e.scriptOK(c, sc.Words[i], bases, basesOK, false); !ok {
			return "", false
		}
	}
	ws := sc.Words
	_, blind := wildcardBlind(sc)
	exact := len(sc.Command.Assigns) > 0 || blind || len(ws) < 2
	if exact {
		text := canonWords(ws)
		if len(sc.Command.Assigns) > 0 {
			text = strings.TrimSpace(canonAssigns(sc.Command.Assigns) + " " + canonWords(sc.Command.Words))
		}
		return Rule{Tool: "Bash", Specifier: escapeStars(text)}.String(), true
	}
	prefix := ws[:2]
	if strings.HasPrefix(prefix[1].Value, "-") || prefix[1].Dynamic {
		prefix = ws[:1]
	}
	return Rule{Tool: "Bash", Specifier: escapeStars(canonWords(prefix)) + " *"}.String(), true
}

func escapeStars(s string) string { return strings.ReplaceAll(s, "*", `\*`) }

// SuggestUpdate wraps [Engine.Suggest] in an
// [Update] for dest.
func (e *Engine) SuggestUpdate(req *Request, dest Destination) (Update, bool) {
	rules := e.Suggest(req)
	if len(rules) == 0 {
		return Update{}, false
	}
	return Update{Destination: dest, Kind: settings.Allow, Rules: rules}, true
}
