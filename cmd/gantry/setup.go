package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/workspace"
)

// safetyFlags are the flags every command that runs tools shares.
type safetyFlags struct {
	cwd        string
	mode       string
	allowed    []string
	disallowed []string
	trust      bool
	noSettings bool
	policy     string // managed policy file ("" = default, "-" = none)
}

func (f *safetyFlags) workDir() (string, error) {
	dir := f.cwd
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("--cwd %s is not a directory", dir)
	}
	return dir, nil
}

// workspaceOptions turns the safety flags into the options of the session
// assembly. --trust is recorded in the trust store first, so later sessions
// of the folder are trusted too.
func (f *safetyFlags) workspaceOptions(a *app, dir string) (workspace.Options, error) {
	if f.trust && !f.noSettings {
		if err := trustStore(a).Trust(dir); err != nil {
			return workspace.Options{}, fmt.Errorf("--trust: %w", err)
		}
	}
	return workspace.Options{
		Dir: dir, Mode: tool.Mode(f.mode), Allow: toolset.SplitNameLists(f.allowed), Deny: toolset.SplitNameLists(f.disallowed),
		Trusted: f.trust, NoSettings: f.noSettings, PolicyPath: f.policy,
		Getenv: a.getenv, UserHome: a.getenv("HOME"),
		Warn: func(msg string) { fmt.Fprintln(a.stderr, "gantry:", msg) },
	}, nil
}

// openWorkspace assembles the session of a command from its safety flags;
// adjust may change the options before.
func openWorkspace(ctx context.Context, a *app, f *safetyFlags, dir string, adjust func(*workspace.Options)) (*workspace.Workspace, error) {
	o, err := f.workspaceOptions(a, dir)
	if err != nil {
		return nil, err
	}
	if adjust != nil {
		adjust(&o)
	}
	return workspace.Open(ctx, o)
}

func trustStore(a *app) *settings.TrustStore {
	home := settings.GantryHome(a.getenv, a.getenv("HOME"))
	return &settings.TrustStore{Path: filepath.Join(home, "trusted-folders.json")}
}
