// Package file holds Gantry's file tools: Read, Write, Edit and NotebookEdit.
//
// The tools are concurrency-safe values shared by every call of a session (and
// by sessions); what belongs to one session travels in the call's [tool.Env]:
// the working directory (relative paths are resolved against env.WorkDir) and
// the file-state cache env.Files, which records every read and write.
//
// # Read before write
//
// Write, Edit and NotebookEdit change a file that exists only if the session has
// read it and it is unchanged since: the state recorded in env.Files must match
// the file on disk (by content hash when one was recorded, else by size and
// modification time). Write additionally requires that the whole file was read
// (or written) — a partial read is not enough to replace a file. A nil env.Files
// makes those tools fail with a clear error result; Read works without it.
//
// # Writes
//
// Every write is atomic: a temporary file in the target's directory, fsync,
// chmod to the original mode, rename over the target (through a symbolic link
// to its target, so the link stays a link). On any failure the original file is
// untouched and the temporary file removed. Writes to one path are serialised
// by a per-path lock shared by the tools built by [Tools] (or given in
// [Options.Locks]), and each call re-checks the file under that lock, so two
// racing edits cannot lose one another's change.
//
// # Output channels
//
// The model channel carries file content faithfully (invalid UTF-8 replaced by
// U+FFFD, never raw bytes). The display channel, meant for a terminal, carries
// a summary or a unified diff in which ANSI/OSC escapes, other control
// characters and invisible bidirectional or zero-width characters are shown
// escaped (see [EscapeDisplay]).
package file
