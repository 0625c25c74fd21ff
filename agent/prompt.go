package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/procenv"
)

// memoryFileNames are the project instruction files read from the working
// directory and each parent, in this order within a directory.
var memoryFileNames = []string{"AGENTS.md", "CLAUDE.md", "GANTRY.md"}

// maxMemoryBytes bounds one memory file in the system prompt.
const maxMemoryBytes = 64 << 10

// MemoryFile is one instruction file found for the system prompt.
type MemoryFile struct {
	Path    string
	Content string
}

// FindMemoryFiles returns the memory files that apply to cwd: the user-level
// file (<home>/GANTRY.md, if home is not empty) first, then AGENTS.md,
// CLAUDE.md and GANTRY.md from the filesystem root down to cwd, so that the
// most specific instructions come last. Files larger than 64 KiB are cut.
func FindMemoryFiles(cwd, home string) []MemoryFile {
	var out []MemoryFile
	read := func(p string) {
		b, err := os.ReadFile(p)
		if err != nil || len(strings.TrimSpace(string(b))) == 0 {
			return
		}
		if len(b) > maxMemoryBytes {
			b = append(b[:maxMemoryBytes:maxMemoryBytes], "\n[… cut at 64 KiB]"...)
		}
		out = append(out, MemoryFile{Path: p, Content: string(b)})
	}
	if home != "" {
		read(filepath.Join(home, "GANTRY.md"))
	}
	var dirs []string
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(dirs)
	for _, d := range dirs {
		for _, n := range memoryFileNames {
			read(filepath.Join(d, n))
		}
	}
	return out
}

// EnvFacts are the environment facts the system prompt states.
type EnvFacts struct {
	WorkDir   string
	Platform  string
	Date      time.Time
	IsGitRepo bool
	GitStatus string // a short summary: branch and changed files, bounded
}

// GatherEnvFacts collects facts about cwd. The git summary is bounded in time
// (2 s) and size (40 lines); without git or outside a repository it is empty.
func GatherEnvFacts(ctx context.Context, cwd string, now time.Time) EnvFacts {
	f := EnvFacts{WorkDir: cwd, Platform: runtime.GOOS + "/" + runtime.GOARCH, Date: now}
	if !mayBeGitRepo(cwd) {
		return f // no git process for a directory outside any repository
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", cwd, "--no-optional-locks", "status", "--short", "--branch")
	cmd.Env = procenv.Build(os.Environ(), procenv.Options{Set: []string{"GIT_TERMINAL_PROMPT=0"}})
	out, err := cmd.Output()
	if err != nil {
		return f
	}
	f.IsGitRepo = true
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > 40 {
		lines = append(lines[:40], fmt.Sprintf("… and %d more changed files", len(lines)-40))
	}
	f.GitStatus = strings.Join(lines, "\n")
	return f
}

// mayBeGitRepo reports whether git could find a repository for dir: a
// .git entry (directory, or file for worktrees and submodules) in dir or
// one of its parents, or GIT_DIR in the environment. False spares the
// fork and exec of git.
func mayBeGitRepo(dir string) bool {
	if os.Getenv("GIT_DIR") != "" {
		return true
	}
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false
		}
		d = parent
	}
}

// defaultInstructions is the base of the system prompt.
const defaultInstructions = `You are an agent that completes tasks for the user with the tools you are given.
Work in the user's working directory. Read files before changing them, prefer small precise edits, and verify your
work (run the tests or the program) when you can. Use the dedicated tools (Read, Edit, Glob, Grep) rather than shell
equivalents. When you are done, reply with a short summary of what you did.`

// BuildSystemPrompt assembles the system prompt: the instructions (base if
// empty), the environment facts, the memory files, and an appendix.
func BuildSystemPrompt(base string, facts EnvFacts, memory []MemoryFile, appendix string) string {
	if base == "" {
		base = defaultInstructions
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(base))
	b.WriteString("\n\n<env>\n")
	fmt.Fprintf(&b, "Working directory: %s\n", facts.WorkDir)
	fmt.Fprintf(&b, "Is a git repository: %v\n", facts.IsGitRepo)
	fmt.Fprintf(&b, "Platform: %s\n", facts.Platform)
	if !facts.Date.IsZero() {
		fmt.Fprintf(&b, "Today's date: %s\n", facts.Date.Format("2006-01-02"))
	}
	b.WriteString("</env>\n")
	if facts.GitStatus != "" {
		fmt.Fprintf(&b, "\ngit status at the start of the session (it will not update):\n%s\n", facts.GitStatus)
	}
	for _, m := range memory {
		fmt.Fprintf(&b, "\nInstructions from %s:\n<instructions>\n%s\n</instructions>\n", m.Path, strings.TrimSpace(m.Content))
	}
	if appendix = strings.TrimSpace(appendix); appendix != "" {
		b.WriteString("\n")
		b.WriteString(appendix)
		b.WriteString("\n")
	}
	return b.String()
}
