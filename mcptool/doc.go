// Package mcptool makes the tools and resources of MCP servers available to
// Gantry: a [Manager] connects to the servers of a [ConfigFile] (stdio
// processes, streamable HTTP or SSE endpoints) with the official MCP Go SDK,
// and offers each server's tools as [tool.Tool]s named
// mcp__<server>__<tool> ([ToolName]) and its resources as the
// mcpres.Resources service of the ListMcpResources and ReadMcpResource
// tools ([Manager.Resources]).
//
// # Configuration
//
// [ParseConfig] reads `.mcp.json`-shaped files ({"mcpServers": {name:
// {type, command, args, env, url, headers}}}) and expands ${VAR} and
// ${VAR:-default} ([ExpandEnv]). [Load] merges a project's `.mcp.json` —
// only when the caller says the folder is trusted ([LoadOptions.Trusted]) —
// with explicit files (--mcp-config) and servers given in code. Server names
// are 1–40 of [a-zA-Z0-9_-], may not contain "__" nor end in "_" (the pool's
// rules, toolset.CheckServerName).
//
// # Approval of project servers
//
// A trusted folder's `.mcp.json` can change after the user trusted it (a
// pull, a branch switch). [LoadOptions.Approve] checks each project server
// against the definition the user approved: [Fingerprint] hashes the
// definition as written (before ${VAR} expansion), [StoreApprover] keeps
// the fingerprints in an [ApprovalStore] (settings.MCPApprovals in the CLI),
// and a server that changed or was added since is left out of
// Config.Servers and listed in [ConfigFile.Held] until approved again. Servers
// of explicit files and of code are never checked.
//
// # Safety and faults
//
// Servers are untrusted. Their tool annotations are kept as hints
// ([tool.Spec.Annotations]) but never make a call read-only or
// non-destructive, so the permission layer never auto-approves an MCP call
// because a server said readOnlyHint; the hint only marks the tool
// concurrency-safe for ordering (see [Tool], [Options.SerialCalls]).
// Descriptions are cut to [MaxDescription] runes.
//
// Every request is bounded: connecting by [Options.ConnectTimeout] (30 s,
// or MCP_TIMEOUT in ms), a call by [Options.CallTimeout] (10 min, or
// MCP_TOOL_TIMEOUT in ms). Cancelling a call's context cancels the request
// and the SDK sends notifications/cancelled to the server. When a server
// crashes or its connection drops, in-flight calls end with an error
// wrapping [ErrDisconnected], its tools report Enabled false and fail with
// [ErrUnavailable], and the manager reconnects at most
// [Options.MaxReconnects] times in a row with doubling delays; other servers
// are unaffected. notifications/tools/list_changed re-lists the server's
// tools; [Options.OnToolsChanged] tells the pool to refresh.
//
// Elicitation requests (a server asking the user a question) go to
// [Options.Elicit]; without one they are declined.
package mcptool
