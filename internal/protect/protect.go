// Package protect names the files and directories of a project that run
// code or change permissions later, outside the command that writes them:
// version-control metadata and hooks, Gantry's and other agents' settings,
// MCP server definitions, editor tasks, environment loaders and shell rc
// files. It is the one list: the permission analysis (no automatic
// approval writes, moves or links them) and the sandbox (no contained
// command creates or changes them) both take it from here.
package protect

import "slices"

var dirs = []string{
	".git", ".gantry", ".claude", ".vscode", ".idea", ".husky",
	// Other version control systems' metadata: configuration and the
	// hooks they run (.hg/hgrc [hooks], .hg/hooks, .svn, .bzr, .jj, .sl).
	".hg", ".svn", ".bzr", ".jj", ".sl",
}

var files = []string{
	".mcp.json", ".gitmodules", ".gitconfig", ".envrc", ".npmrc", ".pypirc", ".netrc", ".yarnrc",
	".yarnrc.yml", ".ripgreprc", ".hgrc", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".kshrc", ".inputrc",
	".pam_environment", ".xprofile", ".xinitrc", ".xsessionrc",
}

// Dirs returns the protected directory names (a new slice each call).
func Dirs() []string { return slices.Clone(dirs) }

// Files returns the protected file names (a new slice each call).
func Files() []string { return slices.Clone(files) }

// Names returns every protected name, directories first.
func Names() []string { return slices.Concat(dirs, files) }
