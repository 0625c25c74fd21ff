// A program for Anthropic's Agent SDK that watches background Bash
// commands the way a UI does: the model starts one with
// run_in_background, and the program waits for the command's
// system/task_started and system/task_notification (status, exit code in
// the summary, output_file holding its output).
// The Go test (streamjson/bgtask_test.go) scripts the model.
//
// Environment: GANTRY_BIN, SDK_DIR, WORK_DIR, ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import assert from 'node:assert/strict';

const req = createRequire(join(process.env.SDK_DIR, 'package.json'));
const { query } = await import(pathToFileURL(req.resolve('@anthropic-ai/claude-agent-sdk')).href);
const log = (...a) => console.error('[sdk-bgtask]', ...a);

let release;
const done = new Promise((r) => (release = r));
async function* input() {
  yield { type: 'user', message: { role: 'user', content: 'build it in the background' }, parent_tool_use_id: null, session_id: '' };
  await done;
}
const q = query({
  prompt: input(),
  options: {
    pathToClaudeCodeExecutable: process.env.GANTRY_BIN,
    cwd: process.env.WORK_DIR,
    model: 'claude-sonnet-4-5',
    permissionMode: 'default',
    allowedTools: ['Bash'],
    stderr: (s) => log('gantry stderr:', s.trimEnd()),
  },
});
const seen = [];
let started, note, result, toolUse;
const timer = setTimeout(() => {
  log('timed out; messages:', JSON.stringify(seen));
  process.exit(1);
}, 30000);
for await (const m of q) {
  seen.push(m.type === 'system' ? `system/${m.subtype}` : m.type);
  if (m.type === 'result' && m.is_error) {
    log('error result:', JSON.stringify(m));
    process.exit(1);
  }
  if (m.type === 'assistant') {
    toolUse ??= m.message.content.find((b) => b.type === 'tool_use' && b.name === 'Bash');
  }
  if (m.type === 'system' && m.subtype === 'task_started') {
    assert.ok(toolUse, 'task_started came before the assistant message holding its Bash call');
    started = m;
  }
  if (m.type === 'system' && m.subtype === 'task_notification') {
    assert.ok(started, 'task_notification came before task_started');
    note = m;
  }
  if (m.type === 'result') result = m;
  if (result && note) break;
}
release();
q.close?.();
clearTimeout(timer);

assert.equal(started.task_id, note.task_id);
assert.equal(started.tool_use_id, toolUse.id);
assert.equal(note.tool_use_id, toolUse.id);
assert.equal(started.description, 'echo built; exit 3');
assert.equal(started.task_type, 'local_bash');
assert.equal(started.is_backgrounded, true);
assert.equal(note.status, 'failed');
assert.match(note.summary, /exit code 3/);
assert.equal(readFileSync(note.output_file, 'utf8'), 'built\n');
log('messages:', seen.join(' '));
console.log('SDK-BGTASK-OK');
