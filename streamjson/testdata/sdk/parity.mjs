// A program written for Anthropic's Agent SDK the way its docs show,
// run unchanged against gantry: what an SDK program reads besides the
// message types — tool_use_result in the shapes sdk-tools.d.ts declares,
// and result.result of a structured-output run as JSON text. The Go test
// (streamjson/parity_test.go) scripts the model.
//
// Environment: GANTRY_BIN, SDK_DIR, WORK_DIR (holds a.txt and edit.txt),
// ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import assert from 'node:assert/strict';

const req = createRequire(join(process.env.SDK_DIR, 'package.json'));
const { query, listSessions, getSessionMessages, getSessionInfo } = await import(pathToFileURL(req.resolve('@anthropic-ai/claude-agent-sdk')).href);
const log = (...a) => console.error('[sdk-parity]', ...a);
const base = {
  pathToClaudeCodeExecutable: process.env.GANTRY_BIN,
  cwd: process.env.WORK_DIR,
  model: 'claude-sonnet-4-5',
  settingSources: [],
  permissionMode: 'acceptEdits',
  allowedTools: ['Read', 'Edit', 'Bash'],
  stderr: (s) => log('gantry stderr:', s.trimEnd()),
};

// 1. Structured output: result.result is the answer as JSON text.
let result;
for await (const m of query({
  prompt: 'structured: who wrote the first program?',
  options: {
    ...base,
    outputFormat: {
      type: 'json_schema',
      schema: { type: 'object', properties: { name: { type: 'string' }, year: { type: 'number' } }, required: ['name', 'year'] },
    },
  },
})) {
  if (m.type === 'result') result = m;
}
assert.equal(result.subtype, 'success', JSON.stringify(result));
assert.deepEqual(result.structured_output, { name: 'Ada', year: 1843 });
assert.deepEqual(JSON.parse(result.result), { name: 'Ada', year: 1843 });

// 2. Tool results as the SDK declares them.
const byTool = {};
const names = {};
for await (const m of query({ prompt: 'tools: read, edit and run', options: base })) {
  if (m.type === 'assistant') {
    for (const b of m.message.content) if (b.type === 'tool_use') names[b.id] = b.name;
  }
  if (m.type === 'user' && m.parent_tool_use_id === null) {
    for (const b of m.message.content) {
      if (b.type === 'tool_result') byTool[names[b.tool_use_id]] ??= m.tool_use_result;
    }
  }
}
const read = byTool.Read;
assert.equal(read.type, 'text', JSON.stringify(read));
assert.equal(read.file.content, 'alpha\nbeta');
assert.equal(read.file.numLines, 2);
assert.equal(read.file.startLine, 1);
assert.equal(read.file.totalLines, 2);
assert.ok(read.file.filePath.endsWith('a.txt'));
const edit = byTool.Edit;
assert.equal(edit.oldString, 'two');
assert.equal(edit.newString, 'TWO');
assert.equal(edit.originalFile, 'one\ntwo\nthree\n');
assert.equal(edit.replaceAll, false);
assert.deepEqual(edit.structuredPatch[0].lines, [' one', '-two', '+TWO', ' three']);
const bash = byTool.Bash;
assert.equal(bash.stdout.trim(), 'hi');
assert.equal(bash.stderr, '');
assert.equal(bash.interrupted, false);

// 3. Slash commands: /compact is listed and runs, with a compact_boundary.
let next;
async function* turns() {
  for (const text of ['compact: read a few files', '/compact keep the file names']) {
    const gate = new Promise((r) => (next = r));
    yield { type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '' };
    await gate;
  }
}
const q = query({ prompt: turns(), options: base });
const seen = [];
let initCommands;
const compactResults = [];
const statuses = [];
for await (const m of q) {
  seen.push(m.type + (m.subtype ? '/' + m.subtype : ''));
  if (m.type === 'system' && m.subtype === 'init') initCommands = m.slash_commands;
  if (m.type === 'system' && m.subtype === 'status') statuses.push(m);
  if (m.type === 'system' && m.subtype === 'compact_boundary') {
    assert.equal(m.compact_metadata.trigger, 'manual');
    assert.equal(typeof m.compact_metadata.pre_tokens, 'number');
  }
  if (m.type === 'result') {
    compactResults.push(m);
    if (compactResults.length === 1) {
      const cmds = await q.supportedCommands();
      const compact = cmds.find((c) => c.name === 'compact');
      assert.ok(compact, JSON.stringify(cmds));
      assert.equal(typeof compact.description, 'string');
      assert.equal(compact.argumentHint, '[instructions]');
    }
    next?.();
  }
}
assert.ok(initCommands.includes('compact'), JSON.stringify(initCommands));
assert.ok(seen.includes('system/compact_boundary'), seen.join(' '));
assert.deepEqual(statuses.map((x) => [x.status, x.compact_result ?? null]), [['compacting', null], [null, 'success']], JSON.stringify(statuses));
assert.equal(compactResults.length, 2);
assert.equal(compactResults[1].subtype, 'success', JSON.stringify(compactResults[1]));
// 4. The session helpers see Gantry's sessions (CLAUDE_CONFIG_DIR is set
// by the test for this program and gantry alike), resumed ones too.
let sid;
for await (const m of query({ prompt: 'sessions: remember the word heron', options: base })) {
  if (m.type === 'result') sid = m.session_id;
}
for await (const m of query({ prompt: 'sessions: which word?', options: { ...base, resume: sid } })) {
  if (m.type === 'result') assert.equal(m.subtype, 'success');
}
const sessions = await listSessions({ dir: process.env.WORK_DIR });
const mine = sessions.find((x) => x.sessionId === sid);
assert.ok(mine, `listSessions: ${JSON.stringify(sessions)}`);
assert.equal(mine.firstPrompt, 'sessions: remember the word heron', JSON.stringify(mine));
assert.equal(typeof mine.lastModified, 'number');
const all = await listSessions();
assert.ok(all.some((x) => x.sessionId === sid), 'listSessions() without dir');
const info = await getSessionInfo(sid, { dir: process.env.WORK_DIR });
assert.equal(info?.sessionId, sid);
const msgs = await getSessionMessages(sid, { dir: process.env.WORK_DIR });
assert.deepEqual(msgs.map((x) => x.type), ['user', 'assistant', 'user', 'assistant'], JSON.stringify(msgs));
assert.equal(msgs[0].message.content, 'sessions: remember the word heron');
assert.equal(msgs[1].message.content[0].text, 'remembered');
assert.equal(msgs[2].message.content, 'sessions: which word?');
assert.ok(msgs.every((x) => x.session_id === sid && x.parent_tool_use_id === null));

// 5. Subagents with partial messages, over several runs: task_started and
// task_notification with the Agent call's metadata, and no subagent
// message before the assistant message holding its Agent call.
const runs = Number(process.env.ORDER_RUNS || 10);
for (let run = 0; run < runs; run++) {
  const seenCalls = new Set();
  let started, notified;
  for await (const m of query({ prompt: `agents: delegate run ${run}`, options: { ...base, includePartialMessages: true } })) {
    if (m.type === 'assistant') {
      if (m.parent_tool_use_id !== null) assert.ok(seenCalls.has(m.parent_tool_use_id), `run ${run}: a subagent message before its Agent call`);
      for (const b of m.message.content) if (b.type === 'tool_use') seenCalls.add(b.id);
    }
    if (m.type === 'user' && m.parent_tool_use_id !== null) assert.ok(seenCalls.has(m.parent_tool_use_id), `run ${run}: a subagent message before its Agent call`);
    if (m.type === 'system' && m.subtype === 'task_started') {
      assert.ok(seenCalls.has(m.tool_use_id), `run ${run}: task_started before its Agent call`);
      started = m;
    }
    if (m.type === 'system' && m.subtype === 'task_notification') notified = m;
    if (m.type === 'result') assert.equal(m.subtype, 'success', JSON.stringify(m));
  }
  assert.ok(started, `run ${run}: no task_started`);
  assert.equal(started.description, 'count the files');
  assert.equal(started.subagent_type, 'general-purpose');
  assert.equal(started.task_type, 'local_agent');
  assert.ok(notified, `run ${run}: no task_notification`);
  assert.equal(notified.status, 'completed');
  assert.equal(notified.task_id, started.task_id);
  assert.equal(notified.tool_use_id, started.tool_use_id);
}

log('order runs:', runs);

// 6. Control requests: getContextUsage, setMaxThinkingTokens, accountInfo,
// supportedModels.
{
  let next;
  async function* two() {
    for (const text of ['control: first', 'control: second']) {
      const gate = new Promise((r) => (next = r));
      yield { type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '' };
      await gate;
    }
  }
  const q = query({ prompt: two(), options: base });
  let n = 0;
  for await (const m of q) {
    if (m.type !== 'result') continue;
    assert.equal(m.subtype, 'success', JSON.stringify(m));
    if (++n === 1) {
      const usage = await q.getContextUsage();
      assert.equal(usage.totalTokens, 150, JSON.stringify(usage)); // the fake server's 120 in + 30 out
      assert.equal(usage.maxTokens, 200000);
      assert.ok(usage.percentage > 0 && usage.percentage < 1);
      assert.deepEqual(usage.categories.map((c) => c.kind), ['used', 'free']);
      assert.equal(usage.model, 'claude-sonnet-4-5');
      await q.setMaxThinkingTokens(2048);
      const account = await q.accountInfo();
      assert.equal(account.apiKeySource, 'ANTHROPIC_API_KEY');
      assert.equal(account.apiProvider, 'firstParty');
      const models = await q.supportedModels();
      assert.ok(models.length >= 1 && models.every((x) => x.value && x.displayName), JSON.stringify(models));
    }
    next();
  }
  assert.equal(n, 2);
}

console.log('SDK-PARITY-OK');
