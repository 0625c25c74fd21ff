// Package toolset decides which tools a model sees and converts them to the
// providers' tool formats.
//
// A [Registry] holds named factories of built-in tools, each with a [Tier] and
// an optional feature gate. [NewPool] assembles a session's [Pool] from the
// registry, user-defined tools and MCP servers' tools: factories are built
// lazily (once per pool, with the session's [tool.Env]), a user tool with a
// built-in's name replaces it, MCP tools are named mcp__<server>__<tool>,
// allow and deny lists filter by name glob, and a restriction stack narrows
// the set for a skill or subagent. The order is stable (built-ins by name,
// then user tools by name, then MCP tools by server and name), so two
// assemblies of the same inputs serialise byte for byte the same and the
// providers' prompt caches hit.
//
// Deferred tools are sent by name only; the model loads them with the
// ToolSearch tool and they are sent in full from the next request on.
//
// The package holds only provider-neutral formats: [MCPTool] / [Pool.MCP],
// [Markdown] / [Pool.Markdown], and [FullDescription]; it imports no model
// provider's SDK. Each model adapter owns its tool format (the Anthropic
// adapter's ToolParam and ToolParams, the OpenAI adapter's ToolParam and
// ToolParams), built on [Pool.Specs] and [Pool.Listing].
package toolset
