package shellparse

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// gitReadConfig is configuration given to a git command that runs because
// it was classified read-only: a bare repository is only used when named
// (one committed inside the project is not picked up by a cd into it), and
// the programs a repository's configuration may name for reading commands
// (fsmonitor, pager, hooks) are switched off.
var gitReadConfig = [][2]string{
	{"safe.bareRepository", "explicit"},
	{"core.fsmonitor", "false"},
	{"core.pager", "cat"},
	{"core.hooksPath", os.DevNull},
	{"log.showSignature", "false"},
	// A reading command never contacts a remote (a partial clone would
	// fetch missing objects, running the transport, ssh and credential
	// helpers its configuration names).
	{"protocol.allow", "never"},
}

// GitReadEnv returns environment entries (KEY=value) for a command line
// that runs because it is read-only: git reads [gitReadConfig] from
// GIT_CONFIG_COUNT/KEY/VALUE (which override every configuration file),
// never takes optional locks, pages with cat and never prompts.
func GitReadEnv() []string {
	env := []string{
		"GIT_CONFIG_COUNT=" + strconv.Itoa(len(gitReadConfig)),
		"GIT_PAGER=cat", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "GIT_NO_LAZY_FETCH=1",
	}
	for i, kv := range gitReadConfig {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return env
}

// gitRiskyKey reports a repository configuration key (lower case,
// "section.sub.key" or "section.key") that makes a reading git command run
// a program or read configuration from elsewhere.
func gitRiskyKey(section, sub, key string) bool {
	switch section {
	case "core":
		switch key {
		case "fsmonitor", "pager", "hookspath", "sshcommand", "editor", "askpass", "gitproxy", "alternaterefscommand", "worktree":
			return true
		}
	case "diff":
		return key == "external" || sub != "" && (key == "command" || key == "textconv")
	case "filter", "include", "includeif", "pager", "gpg", "trace2", "mailmap":
		return true
	case "blame":
		return key == "ignorerevsfile"
	case "log":
		return key == "showsignature"
	case "interactive":
		return key == "difffilter"
	case "sequence":
		return key == "editor"
	case "remote":
		return key == "uploadpack" || key == "receivepack"
	}
	return false
}

// GitRepoRisk finds the repository that git would use in dir — the first
// directory from dir upwards with a .git entry (a directory, or a file
// "gitdir: …"), or that is itself a bare repository — and reports the
// first key of its own configuration that makes a reading command run a
// program (core.fsmonitor, diff.<driver>.textconv, filter.<driver>.clean,
// an include, …), as "section.key"; "" when there is none or no
// repository. The configuration is every file git reads for it: config
// and config.worktree of the git directory, of the common directory a
// commondir file names, and of its submodules (.git/modules/*), which
// git status and diff enter. A bare repository is reported as such (git
// would take its configuration from a directory the project controls). A
// configuration it cannot read or parse is reported as risky.
func GitRepoRisk(dir string) (string, error) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		gitPath := filepath.Join(d, ".git")
		fi, err := os.Lstat(gitPath)
		if err == nil {
			gd := gitPath
			if !fi.IsDir() {
				// A worktree or submodule: .git is a file "gitdir: …".
				data, err := os.ReadFile(gitPath)
				if err != nil {
					return gitPath, err
				}
				gd = strings.TrimSpace(strings.TrimPrefix(string(data), "gitdir:"))
				if !filepath.IsAbs(gd) {
					gd = filepath.Join(d, gd)
				}
			}
			return gitDirRisk(gd)
		}
		if isBareRepo(d) {
			return "core.bare (" + d + " is a bare repository, whose configuration git would use)", nil
		}
		if d == filepath.Dir(d) {
			return "", nil
		}
	}
}

// isBareRepo reports a directory git would take for a git directory: a
// HEAD file and objects and refs directories.
func isBareRepo(d string) bool {
	if fi, err := os.Lstat(filepath.Join(d, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(d, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// gitDirRisk checks every configuration file git reads for the git
// directory gd.
func gitDirRisk(gd string) (string, error) {
	dirs := []string{gd}
	if common, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		cd := strings.TrimSpace(string(common))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(gd, cd)
		}
		dirs = append(dirs, cd)
	}
	for _, d := range slices.Clone(dirs) {
		if mods, _ := filepath.Glob(filepath.Join(d, "modules", "*")); len(mods) > 0 {
			dirs = append(dirs, mods...)
		}
	}
	for _, d := range dirs {
		// Alternates make git read objects from another repository.
		if _, err := os.Lstat(filepath.Join(d, "objects", "info", "alternates")); err == nil {
			return "objects/info/alternates (objects read from another repository)", nil
		}
		for _, name := range []string{"config", "config.worktree"} {
			if k, err := configRisk(filepath.Join(d, name)); k != "" || err != nil {
				return k, err
			}
		}
	}
	return "", nil
}

func configRisk(path string) (string, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return path, err
	}
	var cfg gitconfig.Config
	if err := gitconfig.NewDecoder(bytes.NewReader(data)).Decode(&cfg); err != nil {
		return path, fmt.Errorf("%s: %w", path, err)
	}
	for _, s := range cfg.Sections {
		name := strings.ToLower(s.Name)
		for _, o := range s.Options {
			if gitRiskyKey(name, "", strings.ToLower(o.Key)) {
				return name + "." + o.Key, nil
			}
		}
		for _, sub := range s.Subsections {
			for _, o := range sub.Options {
				if gitRiskyKey(name, sub.Name, strings.ToLower(o.Key)) {
					return name + "." + sub.Name + "." + o.Key, nil
				}
			}
		}
	}
	return "", nil
}
