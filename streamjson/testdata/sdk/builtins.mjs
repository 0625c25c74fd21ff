// A program for Anthropic's Agent SDK using the built-in slash commands
// the way an SDK user sends them: one streaming session that asks the
// model once, then sends /cost, /context, /model NAME, a prompt (which
// must go to the new model), /clear and a last prompt (which must start
// an empty conversation under a new session id). The commands are listed
// with descriptions by supportedCommands() and in system/init;
// supportedModels() lists the provider's models.
// The Go test (streamjson/commands_test.go) scripts the model and checks
// what it was sent.
//
// Environment: GANTRY_BIN, SDK_DIR, WORK_DIR, ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import assert from 'node:assert/strict';

const req = createRequire(join(process.env.SDK_DIR, 'package.json'));
const { query } = await import(pathToFileURL(req.resolve('@anthropic-ai/claude-agent-sdk')).href);
const log = (...a) => console.error('[sdk-builtins]', ...a);

const prompts = ['first question', '/cost', '/context', '/model claude-haiku-4-5', 'second question', '/clear', 'third question'];
let release;
async function* input() {
  for (const text of prompts) {
    const done = new Promise((r) => (release = r));
    yield { type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '' };
    await done;
  }
}
const q = query({
  prompt: input(),
  options: {
    pathToClaudeCodeExecutable: process.env.GANTRY_BIN,
    cwd: process.env.WORK_DIR,
    model: 'claude-sonnet-4-5',
    permissionMode: 'default',
    stderr: (s) => log('gantry stderr:', s.trimEnd()),
  },
});
const supported = await q.supportedCommands();
const models = await q.supportedModels();
let init;
const results = [];
for await (const m of q) {
  if (m.type === 'system' && m.subtype === 'init' && !init) init = m;
  if (m.type === 'result') {
    results.push(m);
    release();
  }
  if (results.length === prompts.length) break;
}
q.close?.();

for (const name of ['clear', 'context', 'cost', 'model', 'permissions', 'agents', 'mcp', 'memory', 'init', 'review', 'compact']) {
  const c = supported.find((x) => x.name === name);
  assert.ok(c && c.description, `supportedCommands() lacks ${name}: ${JSON.stringify(supported)}`);
  assert.ok(init.slash_commands.includes(name), `init.slash_commands lacks ${name}`);
}
assert.equal(supported.find((x) => x.name === 'model').argumentHint, '[name]');

// supportedModels() is the provider's list (GET /v1/models).
assert.deepEqual(models.map((m) => [m.value, m.displayName]), [['claude-sonnet-4-5', 'Claude Sonnet 4.5'], ['claude-haiku-4-5', 'Claude Haiku 4.5']], JSON.stringify(models));
assert.equal(models[0].description, "the session's model");

const [first, cost, context, model, second, clear, third] = results;
for (const r of results) assert.equal(r.subtype, 'success', JSON.stringify(r));
assert.equal(first.result, 'one');
assert.match(cost.result, /Model calls: 1\b/, cost.result);
assert.match(cost.result, /Tokens: 100 input, 20 output/, cost.result);
assert.match(context.result, /Context: 120 of \d+ tokens/, context.result);
assert.match(model.result, /claude-haiku-4-5/, model.result);
assert.equal(second.result, 'two');
assert.match(clear.result, /new session/, clear.result);
assert.equal(third.result, 'three');
assert.notEqual(third.session_id, first.session_id, 'after /clear the session id changes');
console.log('SDK-BUILTINS-OK');
