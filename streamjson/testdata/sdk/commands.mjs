// A program for Anthropic's Agent SDK using custom slash commands the way
// its docs show: a project command from .claude/commands with arguments,
// argument-hint and allowed-tools, a namespaced one, a user command; the
// commands listed in system/init and by supportedCommands(). Project
// commands apply in a trusted folder only (the first query passes
// --trust); the second query, in another folder not trusted, sees the user's commands only.
// The Go test (streamjson/commands_test.go) scripts the model and checks
// what it was sent.
//
// Environment: GANTRY_BIN, SDK_DIR, WORK_DIR, PLUGIN_DIR, UNTRUSTED_DIR (holds the
// same commands; --trust records WORK_DIR as trusted), ANTHROPIC_BASE_URL,
// ANTHROPIC_API_KEY.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import assert from 'node:assert/strict';

const req = createRequire(join(process.env.SDK_DIR, 'package.json'));
const { query } = await import(pathToFileURL(req.resolve('@anthropic-ai/claude-agent-sdk')).href);
const log = (...a) => console.error('[sdk-commands]', ...a);
const base = {
  pathToClaudeCodeExecutable: process.env.GANTRY_BIN,
  cwd: process.env.WORK_DIR,
  model: 'claude-sonnet-4-5',
  settingSources: ['user', 'project', 'local'],
  permissionMode: 'acceptEdits',
  stderr: (s) => log('gantry stderr:', s.trimEnd()),
};

async function run(prompt, options) {
  let next;
  const gate = new Promise((r) => (next = r));
  async function* input() {
    yield { type: 'user', message: { role: 'user', content: prompt }, parent_tool_use_id: null, session_id: '' };
    await gate;
  }
  const q = query({ prompt: input(), options });
  let init, result;
  const supported = await q.supportedCommands();
  for await (const m of q) {
    if (m.type === 'system' && m.subtype === 'init') init = m;
    if (m.type === 'result') {
      result = m;
      next();
    }
  }
  return { init, result, supported };
}

// 1. Trusted: the project's commands run, expanded, with their tools.
const t = await run("/greet Ada 'good morning'", { ...base, extraArgs: { trust: null } });
assert.equal(t.result.subtype, 'success', JSON.stringify(t.result));
assert.equal(t.result.result, 'greeted');
for (const name of ['compact', 'greet', 'component', 'hello']) {
  assert.ok(t.init.slash_commands.includes(name), `init.slash_commands ${JSON.stringify(t.init.slash_commands)} lacks ${name}`);
}
const greet = t.supported.find((c) => c.name === 'greet');
assert.deepEqual(greet, { name: 'greet', description: 'Greet someone by name', argumentHint: '[name] [greeting]' });
const compact = t.supported.find((c) => c.name === 'compact');
assert.ok(compact && compact.argumentHint === '[instructions]', JSON.stringify(t.supported));

// 2. Untrusted: no project commands; /greet is text for the model.
const u = await run('/greet Ada', { ...base, cwd: process.env.UNTRUSTED_DIR });
assert.equal(u.result.subtype, 'success', JSON.stringify(u.result));
assert.ok(!u.init.slash_commands.includes('greet'), JSON.stringify(u.init.slash_commands));
assert.ok(u.init.slash_commands.includes('hello'), JSON.stringify(u.init.slash_commands));
assert.ok(!u.supported.some((c) => c.name === 'greet'));

// 3. Pre-execution and file inclusion run through the permission
// pipeline: an allowed echo and Read, then a network command nobody
// approved (no canUseTool here), which fails the command.
const st = await run('/status x', base);
assert.equal(st.result.subtype, 'success', JSON.stringify(st.result));
const fe = await run('/fetch', base);
assert.equal(fe.result.is_error, true, JSON.stringify(fe.result));
assert.ok(JSON.stringify(fe.result.errors).includes('/fetch'), JSON.stringify(fe.result));

// 4. A plugin (the SDK's plugins option, --plugin-dir for gantry): listed
// in system/init, its command and agent namespaced by the plugin's name.
const pl = await run('/tools:hello Ada', { ...base, plugins: [{ type: 'local', path: process.env.PLUGIN_DIR }] });
assert.equal(pl.result.subtype, 'success', JSON.stringify(pl.result));
assert.deepEqual(pl.init.plugins.map((p) => p.name), ['tools'], JSON.stringify(pl.init.plugins));
assert.ok(pl.init.slash_commands.includes('tools:hello'), JSON.stringify(pl.init.slash_commands));
assert.ok(pl.supported.some((c) => c.name === 'tools:hello' && c.description === 'greets from the plugin'));
assert.ok(pl.init.agents.includes('tools:helper'), JSON.stringify(pl.init.agents));

console.log('SDK-COMMANDS-OK');
