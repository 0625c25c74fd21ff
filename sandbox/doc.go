// Package sandbox contains the processes tools start (Bash commands, and
// hooks and MCP stdio servers that opt in) with the operating system's
// means, so that a command the permission analysis misjudged still cannot
// write outside the session's directories, read hidden files, reach the
// network beyond an allow-list, see or signal Gantry, or outlive its call.
//
// One interface, [Backend], rewrites an *exec.Cmd before it starts
// (Wrap(cmd, policy)). Backends:
//
//   - [Bubblewrap]: bwrap with the root filesystem read-only, writable binds
//     of the policy's paths, the protected paths as read-only mount points,
//     tmpfs /tmp, new user (no capabilities, also as root), pid, IPC, UTS and
//     network namespaces, --die-with-parent, no new privileges, the seccomp
//     filter;
//   - [Landlock]: this program re-executed as a helper ([Main]) that drops
//     capabilities and applies Landlock rules and the same seccomp filter,
//     with a cgroup v2 per command for cleanup;
//   - [None]: nothing; the session says so once and never claims a sandbox.
//
// A [Sandbox] is one session's view: the backend chosen by [Detect], the
// session temp dir, the filtering [Proxy] (HTTP CONNECT and plain HTTP on a
// Unix socket, hosts checked against an allow-list and package netguard's
// address rules, the same as WebFetch's) and
// the settings (auto-allow, excluded commands, unsandboxed runs), and the
// guard that reverts, after each command, what it did to the protected
// paths ([ProtectedNames], [Sandbox.WrapGuarded]). Programs
// that use the Landlock backend or the proxy must call [Main] first thing
// in main.
//
// Package sandbox imports nothing of Gantry but netguard and
// internal/shellparse.
package sandbox
