// A program written for Anthropic's Agent SDK, run unchanged against the
// gantry binary (pathToClaudeCodeExecutable) and Gantry's fake model API.
// The Go test (streamjson/sdk_test.go) scripts the model's replies, runs
// this program with node and checks what the model was sent.
//
// Environment: GANTRY_BIN (the gantry binary), SDK_DIR (the npm prefix of
// @anthropic-ai/claude-agent-sdk, from scripts/npm-peers), WORK_DIR (the
// session's working directory). ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY
// point gantry at the fake API.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import assert from 'node:assert/strict';

const sdkDir = process.env.SDK_DIR;
const req = createRequire(join(sdkDir, 'package.json'));
const load = (name) => import(pathToFileURL(req.resolve(name)).href);
const { query, tool, createSdkMcpServer } = await load('@anthropic-ai/claude-agent-sdk');
const { z } = await load('zod');

const uuidRE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const log = (...a) => console.error('[sdk-test]', ...a);

// An in-process MCP server: the model calls its add tool.
let added = null;
const calc = createSdkMcpServer({
  name: 'calc',
  version: '1.0.0',
  tools: [
    tool('add', 'Add two numbers', { a: z.number(), b: z.number() }, async ({ a, b }) => {
      added = a + b;
      return { content: [{ type: 'text', text: `sum=${a + b}` }] };
    }),
  ],
});

// The prompts arrive one after another, each when the previous turn's
// result was seen (streaming input).
let nextTurn;
const turnGate = () => new Promise((r) => (nextTurn = r));
async function* prompts() {
  const texts = ['turn one: add 2 and 3', 'turn two: fetch and write', 'turn three: think long'];
  for (let i = 0; i < texts.length; i++) {
    const gate = turnGate();
    yield { type: 'user', message: { role: 'user', content: texts[i] }, parent_tool_use_id: null, session_id: '' };
    await gate;
  }
}

const asked = [];
const hookCalls = [];
const hookInputs = [];
const q = query({
  prompt: prompts(),
  options: {
    pathToClaudeCodeExecutable: process.env.GANTRY_BIN,
    cwd: process.env.WORK_DIR,
    model: 'claude-sonnet-4-5',
    includePartialMessages: true,
    mcpServers: { calc },
    settingSources: [],
    stderr: (s) => log('gantry stderr:', s.trimEnd()),
    canUseTool: async (toolName, input, { suggestions }) => {
      asked.push(toolName);
      if (toolName === 'mcp__calc__add') return { behavior: 'allow', updatedInput: input };
      return { behavior: 'deny', message: `no ${toolName} here` };
    },
    hooks: {
      PreToolUse: [
        {
          matcher: 'Write',
          hooks: [
            async (input) => {
              hookCalls.push(input.tool_name);
              assert.equal(input.hook_event_name, 'PreToolUse');
              hookInputs.push(input);
              return {
                hookSpecificOutput: {
                  hookEventName: 'PreToolUse',
                  permissionDecision: 'deny',
                  permissionDecisionReason: 'writes are blocked by the hook',
                },
              };
            },
          ],
        },
      ],
    },
  },
});

const results = [];
const inits = [];
const kinds = new Set();
let streamEvents = 0;
let interrupted = false;
const seenToolResults = [];
const deniedMessages = [];
for await (const m of q) {
  kinds.add(m.type + (m.subtype ? '/' + m.subtype : ''));
  if (m.type === 'system' && m.subtype === 'permission_denied') deniedMessages.push(m);
  assert.match(m.uuid, uuidRE, `uuid on ${m.type}`);
  assert.match(m.session_id, uuidRE, `session_id on ${m.type}`);
  switch (m.type) {
    case 'system':
      if (m.subtype === 'init') {
        inits.push(m);
        assert.ok(Array.isArray(m.tools) && m.tools.includes('Read'));
        assert.equal(typeof m.apiKeySource, 'string');
        assert.ok(Array.isArray(m.slash_commands) && Array.isArray(m.agents) && Array.isArray(m.skills));
        assert.equal(m.output_style, 'default');
        const calcStatus = m.mcp_servers.find((s) => s.name === 'calc');
        assert.equal(calcStatus?.status, 'connected', JSON.stringify(m.mcp_servers));
      }
      break;
    case 'stream_event':
      streamEvents++;
      assert.ok(m.event && typeof m.event.type === 'string');
      if (results.length === 2 && !interrupted && m.event.type === 'content_block_delta') {
        interrupted = true;
        log('interrupting');
        await q.interrupt();
      }
      break;
    case 'assistant':
      assert.equal(m.message.type, 'message');
      assert.equal(m.message.role, 'assistant');
      assert.match(m.message.id, /^msg_/);
      assert.equal(typeof m.message.model, 'string');
      assert.equal(typeof m.message.usage.input_tokens, 'number');
      assert.equal(m.message.content.length, 1);
      assert.equal(m.parent_tool_use_id, null);
      break;
    case 'user':
      for (const b of m.message.content) {
        if (b.type === 'tool_result') {
          assert.equal(typeof b.is_error, 'boolean');
          assert.ok('tool_use_result' in m);
          seenToolResults.push(b);
        }
      }
      break;
    case 'result':
      results.push(m);
      log('result', results.length, m.subtype, m.is_error ? m.errors : m.result);
      assert.equal(typeof m.duration_api_ms, 'number');
      assert.equal(typeof m.usage.cache_read_input_tokens, 'number');
      assert.equal(typeof m.modelUsage, 'object');
      assert.ok(Array.isArray(m.permission_denials));
      if (results.length === 1) {
        // Between turns: the session's facts, and another model.
        const status = await q.mcpServerStatus();
        assert.equal(status.find((x) => x.name === 'calc')?.status, 'connected', JSON.stringify(status));
        const init = await q.initializationResult();
        assert.equal(init.output_style, 'default');
        assert.ok(init.agents.some((a) => a.name === 'general-purpose'));
        await q.setModel('claude-opus-4-1');
      }
      if (results.length === 2) {
        // Between turns: a new permission mode for the next one.
        const r = await q.setPermissionMode('acceptEdits');
        log('setPermissionMode ->', JSON.stringify(r));
      }
      nextTurn?.();
      break;
  }
}

// Turn one: the in-process MCP tool ran after canUseTool allowed it.
assert.equal(results.length, 3, 'one result per turn');
assert.equal(added, 5);
assert.equal(results[0].subtype, 'success');
assert.equal(results[0].result, 'the sum is 5');
// Turn two: canUseTool denied Bash, the hook blocked Write.
assert.deepEqual(asked, ['mcp__calc__add', 'Bash']);
assert.deepEqual(hookCalls, ['Write']);
// The hook input names the session's transcript (declared required).
assert.ok(hookInputs.every((i) => typeof i.transcript_path === 'string' && i.transcript_path.endsWith('.jsonl')), JSON.stringify(hookInputs));
assert.equal(results[1].subtype, 'success');
assert.deepEqual(results[1].permission_denials.map((d) => d.tool_name), ['Bash', 'Write']);
const bashResult = seenToolResults.find((b) => String(b.content).includes('no Bash here'));
assert.ok(bashResult && bashResult.is_error, 'the denial reached the model');
const writeResult = seenToolResults.find((b) => String(b.content).includes('blocked by the hook'));
assert.ok(writeResult && writeResult.is_error, 'the hook block reached the model');
// The deny message and the hook's reason reach the model as given.
const text = (b) => (typeof b.content === 'string' ? b.content : b.content.map((c) => c.text ?? '').join(''));
assert.equal(text(bashResult), 'no Bash here');
assert.equal(text(writeResult), 'writes are blocked by the hook');
// Each denial is also a system/permission_denied message.
assert.deepEqual(deniedMessages.map((d) => d.tool_name), ['Bash', 'Write'], JSON.stringify(deniedMessages));
assert.ok(deniedMessages[0].message.includes('no Bash here'), JSON.stringify(deniedMessages[0]));
assert.equal(deniedMessages[1].decision_reason_type, 'hook');
assert.ok(deniedMessages[1].message.includes('blocked by the hook'), JSON.stringify(deniedMessages[1]));
// Turn three: interrupted while streaming, in the mode set between turns.
assert.equal(inits.length, 3, 'system/init opens each turn');
assert.equal(inits[2].permissionMode, 'acceptEdits');
assert.equal(inits[0].model, 'claude-sonnet-4-5');
assert.equal(inits[1].model, 'claude-opus-4-1', 'setModel applies from the next turn');
assert.equal(new Set(inits.map((i) => i.session_id)).size, 1, 'one session');
assert.ok(interrupted);
assert.equal(results[2].subtype, 'error_during_execution');
assert.equal(results[2].is_error, true);
assert.ok(Array.isArray(results[2].errors) && results[2].errors.length > 0);
assert.ok(streamEvents > 0, 'stream_event messages with includePartialMessages');
log('kinds', [...kinds].sort().join(' '));
console.log('SDK-TEST-OK');
