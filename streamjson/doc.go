// Package streamjson speaks the stream-json protocol of Anthropic's Agent
// SDKs (@anthropic-ai/claude-agent-sdk on npm, claude-agent-sdk on PyPI),
// so that a program written for them runs on Gantry by pointing the SDK's
// CLI path (pathToClaudeCodeExecutable, cli_path) at the gantry binary.
//
// The protocol is newline-delimited JSON over the process's standard
// streams. Gantry writes messages (system/init, assistant, user, result,
// stream_event and other system messages) and control requests
// (can_use_tool, hook_callback, mcp_message); it reads user messages and
// control requests (initialize, interrupt, set_permission_mode, set_model,
// mcp_status, …), and the control responses to its own requests.
//
// The parts:
//   - [Writer] turns the events of an agent run ([agent.Event]) into the
//     SDK's message shapes (also used by `gantry -p --output-format
//     stream-json` without streaming input).
//   - [Conn] is one peer of the protocol: it writes lines, reads and
//     dispatches incoming ones, and sends control requests and waits for
//     their responses.
//   - [Serve] runs a whole session over a Conn: it answers initialize,
//     opens the agent through [Options.Open] with what the SDK registered
//     (hook callbacks, SDK-hosted MCP servers, the permission channel), and
//     runs each user message as a turn of the same session until the input
//     ends.
//
// Message and control shapes follow the SDK's published type declarations
// (sdk.d.ts); Gantry-only facts travel in extra fields prefixed gantry_,
// which the SDK passes through untouched.
package streamjson
