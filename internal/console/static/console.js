// The console's progressive enhancement (an ES module, no dependencies):
// forms answered without a page load, live lists, the run page's event
// stream (SSE, resumed by the browser with Last-Event-ID), the schedule
// preview, and Markdown. Every page works without it, except the
// conversation view. Text from the model is only ever set as textContent.

const csrf = () => document.querySelector('meta[name="csrf-token"]')?.content ?? '';

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}

// --- Markdown (a safe subset: DOM nodes, never HTML) ---

const inlineRE = /(`+)([^`]+?)\1|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g;

function inline(text) {
  const f = document.createDocumentFragment();
  let last = 0;
  for (const m of text.matchAll(inlineRE)) {
    if (m.index > last) f.append(text.slice(last, m.index));
    if (m[2] !== undefined) f.append(el('code', { text: m[2] }));
    else if (m[3] !== undefined || m[4] !== undefined) f.append(el('strong', { text: m[3] ?? m[4] }));
    else if (m[5] !== undefined || m[6] !== undefined) f.append(el('em', { text: m[5] ?? m[6] }));
    else if (m[7] !== undefined) f.append(el('a', { href: m[8], rel: 'noopener noreferrer', target: '_blank', text: m[7] }));
    last = m.index + m[0].length;
  }
  if (last < text.length) f.append(text.slice(last));
  return f;
}

export function markdown(src) {
  const out = document.createDocumentFragment();
  const lines = src.replace(/\r\n/g, '\n').split('\n');
  let para = [], list = null;
  const flush = () => {
    if (para.length) out.append(el('p', {}, inline(para.join(' '))));
    para = [];
  };
  const endList = () => { list = null; };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let m;
    if ((m = line.match(/^\s*(```+|~~~+)\s*([\w+-]*)/))) {
      flush(); endList();
      const fence = m[1], code = [];
      for (i++; i < lines.length && !lines[i].trimStart().startsWith(fence); i++) code.push(lines[i]);
      out.append(el('pre', { class: 'code' }, el('code', { text: code.join('\n') })));
    } else if ((m = line.match(/^(#{1,6})\s+(.*)$/))) {
      flush(); endList();
      out.append(el('h' + Math.min(6, m[1].length + 2), {}, inline(m[2])));
    } else if ((m = line.match(/^\s*([-*+]|\d+[.)])\s+(.*)$/))) {
      flush();
      const tag = /\d/.test(m[1]) ? 'ol' : 'ul';
      if (!list || list.tagName.toLowerCase() !== tag) { list = el(tag); out.append(list); }
      list.append(el('li', {}, inline(m[2])));
    } else if ((m = line.match(/^>\s?(.*)$/))) {
      flush(); endList();
      out.append(el('blockquote', {}, inline(m[1])));
    } else if (line.trim() === '') {
      flush(); endList();
    } else if (list && /^\s+\S/.test(line)) {
      list.lastChild.append(' ', inline(line.trim()));
    } else {
      endList();
      para.push(line.trim());
    }
  }
  flush();
  return out;
}

// --- forms ---

async function submitForm(form, submitter) {
  const body = new URLSearchParams(new FormData(form, submitter));
  const err = form.querySelector('.ask-error');
  if (err) err.hidden = true;
  form.classList.add('busy');
  try {
    const resp = await fetch(form.action, {
      method: 'POST', body, credentials: 'same-origin',
      headers: { 'Accept': 'application/json', 'X-CSRF-Token': csrf() },
    });
    const data = await resp.json().catch(() => ({}));
    if (!resp.ok) throw new Error(data.error || resp.statusText);
    if (document.getElementById('live')) await refreshLive();
    else if (document.getElementById('needs')) await refreshPart('needs');
    else if (data.next) location.assign(data.next);
  } catch (e) {
    if (err) { err.textContent = e.message; err.hidden = false; } else alert(e.message);
  } finally {
    form.classList.remove('busy');
  }
}

document.addEventListener('submit', (ev) => {
  const form = ev.target;
  if (form.dataset.confirm && !confirm(form.dataset.confirm)) { ev.preventDefault(); return; }
  if (form.hasAttribute('data-fetch')) {
    ev.preventDefault();
    submitForm(form, ev.submitter);
  }
});

// --- live parts ---

async function fetchDoc(url) {
  const resp = await fetch(url, { credentials: 'same-origin', headers: { 'Accept': 'text/html' } });
  if (!resp.ok) throw new Error(resp.statusText);
  return new DOMParser().parseFromString(await resp.text(), 'text/html');
}

// refreshPart replaces the element #id by the same element of a fresh copy
// of this page, unless the user is typing in it.
async function refreshPart(id) {
  const cur = document.getElementById(id);
  if (!cur || cur.contains(document.activeElement) && document.activeElement !== document.body) return;
  const doc = await fetchDoc(location.href);
  const next = doc.getElementById(id);
  if (next) cur.replaceWith(next);
  const count = doc.getElementById('nav-asks');
  if (count) document.getElementById('nav-asks')?.replaceWith(count);
}

for (const id of ['runs', 'needs']) {
  const e = document.getElementById(id);
  if (!e) continue;
  const every = Number(e.dataset.refresh) || 3000;
  setInterval(() => { if (document.visibilityState === 'visible') refreshPart(id).catch(() => {}); }, every);
}

async function refreshLive() {
  const live = document.getElementById('live');
  if (!live) return;
  const typing = live.contains(document.activeElement) && document.activeElement.matches('textarea, input[type=text]');
  const doc = await fetchDoc(`/runs/${encodeURIComponent(live.dataset.run)}/live`);
  const head = doc.getElementById('runhead');
  if (head) document.getElementById('runhead').replaceWith(head);
  const n = Number(doc.getElementById('needs-count')?.dataset.n ?? 0);
  const nav = document.getElementById('nav-asks');
  if (nav) {
    nav.querySelector('.count')?.remove();
    if (n > 0) nav.append(' ', el('span', { class: 'count', 'aria-label': `${n} waiting`, text: String(n) }));
  }
  const asks = doc.getElementById('asks');
  if (!asks) return;
  // Keep a form being typed into; replace the rest.
  const cur = document.getElementById('asks');
  if (typing) {
    const keep = new Set([...asks.querySelectorAll('[data-ask]')].map((f) => f.dataset.ask));
    for (const f of cur.querySelectorAll('[data-ask]')) if (!keep.has(f.dataset.ask)) f.remove();
    const have = new Set([...cur.querySelectorAll('[data-ask]')].map((f) => f.dataset.ask));
    for (const f of asks.querySelectorAll('[data-ask]')) if (!have.has(f.dataset.ask)) cur.append(f);
  } else cur.replaceWith(asks);
  enhance(document);
}

// --- the conversation ---

function text(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content == null ? '' : JSON.stringify(content, null, 2);
  return content.filter((b) => b.type === 'text').map((b) => b.text).join('\n');
}

function images(content) {
  if (!Array.isArray(content)) return [];
  return content.filter((b) => b.type === 'image' && b.source?.type === 'base64' && /^image\/(png|jpeg|gif|webp)$/.test(b.source.media_type))
    .map((b) => el('img', { src: `data:${b.source.media_type};base64,${b.source.data}`, alt: 'image result' }));
}

function diff(removed, added) {
  const pre = el('pre', { class: 'diff' });
  for (const l of (removed ?? '').replace(/\n$/, '').split('\n')) if (removed) pre.append(el('span', { class: 'del', text: '- ' + l }));
  for (const l of (added ?? '').replace(/\n$/, '').split('\n')) if (added) pre.append(el('span', { class: 'add', text: '+ ' + l }));
  return pre;
}

const quiet = new Set(['Read', 'Grep', 'Glob', 'LS', 'ToolSearch', 'TodoWrite', 'WebSearch', 'WebFetch']);
const agents = new Set(['Agent', 'Task']);

class Conversation {
  constructor(root, runID) {
    this.root = root;
    this.runID = runID;
    this.cards = new Map(); // tool_use id → card
    this.previews = new Map(); // parent id ('' = main) → element
    this.asking = new Set(); // tool_use ids with a pending ask (it may come before the call's card)
  }

  target(parent) {
    const card = parent ? this.cards.get(parent) : null;
    return card ? card.querySelector(':scope > .children') : this.root;
  }

  add(parent, node) {
    this.dropPreview(parent);
    this.target(parent).append(node);
    if (this.follow()) node.scrollIntoView({ block: 'end' });
  }

  follow() { return window.innerHeight + window.scrollY >= document.body.scrollHeight - 200; }

  dropPreview(parent) {
    this.previews.get(parent ?? '')?.remove();
    this.previews.delete(parent ?? '');
  }

  preview(parent, ev) {
    const key = parent ?? '';
    if (ev.type === 'message_start') this.dropPreview(key);
    if (ev.type !== 'content_block_delta' || ev.delta?.type !== 'text_delta') return;
    let p = this.previews.get(key);
    if (!p) {
      p = el('div', { class: 'msg assistant preview', 'aria-hidden': 'true' });
      this.previews.set(key, p);
      this.target(parent).append(p);
    }
    p.textContent += ev.delta.text;
  }

  system(d) {
    switch (d.subtype) {
      case 'init':
        this.add(null, el('p', { class: 'note', text: `Session ${d.session_id ?? ''} · ${d.model ?? ''} · ${d.permissionMode ?? ''} mode · ${(d.tools ?? []).length} tools` }));
        break;
      case 'ask_resolved':
        refreshLive().catch(() => {});
        break;
      case 'informational':
        this.add(null, el('p', { class: 'note', text: d.content }));
        break;
      case 'api_retry':
        this.add(null, el('p', { class: 'note warn', text: `Model API retry ${d.attempt}/${d.max_retries}: ${d.error}` }));
        break;
      case 'compact_boundary':
        this.add(null, el('p', { class: 'note', text: 'The conversation was compacted.' }));
        break;
    }
  }

  assistant(d) {
    const parent = d.parent_tool_use_id;
    for (const b of d.message?.content ?? []) {
      if (b.type === 'text' && b.text) {
        this.add(parent, el('div', { class: 'msg assistant md' }, markdown(b.text)));
      } else if (b.type === 'thinking' && b.thinking) {
        this.add(parent, el('details', { class: 'thinking' }, el('summary', { text: 'Thinking' }), el('p', { text: b.thinking })));
      } else if (b.type === 'tool_use') {
        this.add(parent, this.card(b));
      }
    }
  }

  card(b) {
    const input = b.input ?? {};
    const name = b.name;
    const summary = input.command ?? input.file_path ?? input.notebook_path ?? input.pattern ?? input.url ?? input.query ?? input.description ?? '';
    const card = el('article', { class: 'tool', 'data-tool': name, 'data-id': b.id });
    const state = el('span', { class: 'state', text: 'running' });
    card.append(el('header', {}, el('span', { class: 'name', text: name }), ' ', el('span', { class: 'summary', text: String(summary).split('\n')[0] }), ' ', state));
    const body = el('div', { class: 'body' });
    if (name === 'Bash') body.append(el('pre', { class: 'cmd', text: '$ ' + (input.command ?? '') }));
    else if (name === 'Edit') body.append(diff(input.old_string, input.new_string));
    else if (name === 'MultiEdit') for (const e of input.edits ?? []) body.append(diff(e.old_string, e.new_string));
    else if (name === 'Write') body.append(diff('', input.content));
    else if (agents.has(name)) body.append(el('p', { class: 'hint', text: input.prompt ? input.prompt.slice(0, 500) : '' }));
    else if (name === 'AskUserQuestion') {
      for (const q of input.questions ?? []) {
        body.append(el('p', { text: q.question }), el('ul', {}, ...(q.options ?? []).map((o) => el('li', { text: o.description ? `${o.label} — ${o.description}` : o.label }))));
      }
    } else if (name === 'ExitPlanMode') body.append(el('div', { class: 'md' }, markdown(input.plan ?? '')));
    else if (!quiet.has(name)) body.append(el('pre', { class: 'input', text: JSON.stringify(input, null, 2) }));
    card.append(body);
    if (agents.has(name)) card.append(el('div', { class: 'children' }));
    this.cards.set(b.id, card);
    if (this.asking.has(b.id)) this.waiting(card);
    return card;
  }

  user(d) {
    const content = d.message?.content;
    if (typeof content === 'string') {
      if (!d.parent_tool_use_id) this.add(null, el('div', { class: 'msg user', text: content }));
      return;
    }
    for (const b of content ?? []) {
      if (b.type !== 'tool_result') {
        if (b.type === 'text' && !d.parent_tool_use_id) this.add(null, el('div', { class: 'msg user', text: b.text }));
        continue;
      }
      const card = this.cards.get(b.tool_use_id);
      const out = text(b.content);
      const res = el('pre', { class: 'output' + (b.is_error ? ' err' : ''), text: out || '(no output)' });
      if (!card) { this.add(d.parent_tool_use_id, res); continue; }
      this.asking.delete(b.tool_use_id);
      card.classList.remove('waiting');
      card.classList.add(b.is_error ? 'failed' : 'done');
      card.querySelector('.state').textContent = b.is_error ? 'error' : 'done';
      const name = card.dataset.tool;
      const where = agents.has(name) ? card : card.querySelector('.body');
      if (quiet.has(name) && !b.is_error) {
        const lines = out.split('\n').length;
        where.append(el('details', {}, el('summary', { text: `${lines} line${lines === 1 ? '' : 's'}` }), res, ...images(b.content)));
      } else if (agents.has(name)) {
        // The subagent's own messages are nested above: its answer is
        // usually the last of them, so it is only folded in here.
        const res = el('div', { class: 'msg assistant md sub-result' }, markdown(out));
        const nested = card.querySelector(':scope > .children').childElementCount > 0;
        where.append(nested ? el('details', {}, el('summary', { text: 'What the agent returned' }), res) : res);
      } else {
        where.append(res, ...images(b.content));
      }
    }
  }

  waiting(card) {
    card.classList.add('waiting');
    card.querySelector('.state').textContent = 'needs you';
  }

  ask(d) {
    const id = d.request?.tool_use_id ?? d.request?.ask?.tool_use_id;
    if (id) this.asking.add(id);
    const card = id && this.cards.get(id);
    if (card) this.waiting(card);
    refreshLive().catch(() => {});
  }

  result(d) {
    const box = el('section', { class: 'result ' + (d.is_error ? 'failed' : 'done'), 'aria-label': 'Result' });
    box.append(el('h2', { text: d.is_error ? `Ended: ${d.subtype}` : 'Result' }));
    if (d.result) box.append(el('div', { class: 'md' }, markdown(d.result)));
    for (const e of d.errors ?? []) box.append(el('p', { class: 'error', text: e }));
    const u = d.usage ?? {};
    box.append(el('p', { class: 'usage', text:
      `${d.num_turns} turn${d.num_turns === 1 ? '' : 's'} · ${((d.duration_ms ?? 0) / 1000).toFixed(1)} s · $${(d.total_cost_usd ?? 0).toFixed(4)} · ` +
      `${u.input_tokens ?? 0} in / ${u.output_tokens ?? 0} out tokens` +
      ((d.permission_denials ?? []).length ? ` · ${d.permission_denials.length} denied` : '') }));
    this.add(null, box);
  }
}

function watch(root) {
  const live = document.getElementById('live');
  const conv = new Conversation(root, live?.dataset.run);
  const es = new EventSource(root.dataset.events);
  const on = (type, fn) => es.addEventListener(type, (e) => {
    let d;
    try { d = JSON.parse(e.data); } catch { return; }
    fn(d);
  });
  on('system', (d) => conv.system(d));
  on('assistant', (d) => conv.assistant(d));
  on('user', (d) => conv.user(d));
  on('stream_event', (d) => conv.preview(d.parent_tool_use_id, d.event ?? {}));
  on('control_request', (d) => conv.ask(d));
  on('result', (d) => conv.result(d));
  on('end', () => {
    es.close();
    root.dataset.ended = 'true';
    refreshLive().catch(() => {});
  });
  es.addEventListener('error', (e) => {
    if (e.data) { // the API's own error event, not a lost connection
      es.close();
      root.append(el('p', { class: 'error', text: JSON.parse(e.data).message }));
    }
  });
}

// --- schedule preview ---

function schedulePreview(form) {
  const cron = form.querySelector('#cron'), tz = form.querySelector('#timezone'), out = form.querySelector('#preview');
  let timer;
  const update = async () => {
    if (!cron.value.trim()) { out.replaceChildren(); return; }
    const q = new URLSearchParams({ cron: cron.value, timezone: tz.value });
    const resp = await fetch('/schedules/preview?' + q, { credentials: 'same-origin', headers: { 'Accept': 'application/json' } });
    const d = await resp.json();
    if (d.error) { out.replaceChildren(el('p', { class: 'error', text: d.error })); return; }
    out.replaceChildren(el('p', { text: 'Next fires:' }), el('ol', {}, ...d.next.map((t) => el('li', { text: t }))));
  };
  const later = () => { clearTimeout(timer); timer = setTimeout(() => update().catch(() => {}), 250); };
  cron.addEventListener('input', later);
  tz.addEventListener('input', later);
}

// --- start ---

function enhance(root) {
  for (const e of root.querySelectorAll('.md:not([data-md])')) {
    e.dataset.md = '1';
    if (e.childElementCount === 0) e.replaceChildren(markdown(e.textContent));
  }
}

enhance(document);
const conv = document.getElementById('conversation');
if (conv) watch(conv);
const addJob = document.getElementById('add-job');
if (addJob) schedulePreview(addJob);
