// messages.js: the message explorer of one shard (#22), page by page,
// newest or oldest first, from either end or from a position sought by
// entry id or by time (time t is the id "<t in ms>-0"): oldest first
// starts at that id, newest first at that id going back.

import { get, monPath, query } from './api.js';
import { errorBox, field, fill, h, showError, table, time } from './dom.js';

// MAX_SEQ is the largest sequence part of an entry id (2^64 - 1).
const MAX_SEQ = 2n ** 64n - 1n;

// parseId reads "<ms>-<seq>" or "<ms>" (sequence 0) into [ms, seq] as
// BigInts, or returns null.
function parseId(s) {
  const m = /^(\d{1,20})(?:-(\d{1,20}))?$/.exec(s.trim());
  if (!m) return null;
  const ms = BigInt(m[1]), seq = BigInt(m[2] ?? 0);
  return ms <= MAX_SEQ && seq <= MAX_SEQ ? [ms, seq] : null;
}

// cursorBefore returns the page cursor from which a listing in direction
// dir starts with the entry id (or the first after it): the API lists the
// entries strictly after a cursor, so it is the id just before (oldest
// first) or just after (newest first); null means from that end.
function cursorBefore([ms, seq], dir) {
  if (dir === 'FORWARD') {
    if (seq > 0n) return `${ms}-${seq - 1n}`;
    return ms > 0n ? `${ms - 1n}-${MAX_SEQ}` : null;
  }
  if (seq < MAX_SEQ) return `${ms}-${seq + 1n}`;
  return ms < MAX_SEQ ? `${ms + 1n}-0` : null;
}

export function messagesView(p, g, shard) {
  const base = '#/messages/' + encodeURIComponent(p) + '/' + encodeURIComponent(g) + '/';
  const shardSel = h('select', { name: 'shard', onchange: () => { location.hash = base + shardSel.value; } });
  const direction = h('select', { name: 'direction', onchange: () => restart() },
    h('option', { value: 'BACKWARD' }, 'newest first (BACKWARD)'), h('option', { value: 'FORWARD' }, 'oldest first (FORWARD)'));
  const limit = h('input', { name: 'limit', type: 'number', min: 1, max: 1000, value: '10', onchange: () => restart() });
  const seekId = h('input', { name: 'seekId', placeholder: '1733390000000-0', class: 'mono' });
  const seekTime = h('input', { name: 'seekTime', type: 'datetime-local', step: 1 });
  const records = h('div', { id: 'records' });
  const pageInfo = h('span', { id: 'page-info' });
  const err = errorBox();
  const seekErr = errorBox();
  // from is the sought id [ms, seq] the first page starts at, null for the
  // end the direction begins with; cursors[k] is the cursor of page k;
  // next is the cursor of the page after the one shown, null on the last
  // page.
  let from = null;
  let cursors = [null];
  let next = null;
  let shardCount = -1;

  const show = (e) => showError(err, e);
  const prevBtn = h('button', { type: 'button', id: 'prev-page', onclick: () => { cursors.pop(); refresh().catch(show); } }, '← Previous page');
  const nextBtn = h('button', { type: 'button', id: 'next-page', onclick: () => { cursors.push(next); refresh().catch(show); } }, 'Next page →');
  const firstBtn = h('button', { type: 'button', onclick: () => seek(null) }, 'First page');

  // restart shows the first page from the sought position.
  function restart() {
    cursors = [from && cursorBefore(from, direction.value)];
    refresh().catch(show);
  }

  function seek(id) {
    showError(seekErr, null);
    from = id;
    restart();
  }

  const seekIdForm = h('form', {
    id: 'seek-id-form', class: 'inline-form',
    onsubmit: (e) => {
      e.preventDefault();
      const id = parseId(seekId.value);
      if (!id) {
        showError(seekErr, new Error(`Not an entry id: "${seekId.value}" (want <ms>-<seq> or <ms>).`));
        return;
      }
      seek(id);
    },
  }, field('Entry id', seekId), h('button', { type: 'submit' }, 'Go to id'));
  const seekTimeForm = h('form', {
    id: 'seek-time-form', class: 'inline-form',
    onsubmit: (e) => {
      e.preventDefault();
      const ms = new Date(seekTime.value).getTime();
      if (!seekTime.value || isNaN(ms) || ms < 0) {
        showError(seekErr, new Error('Pick a date and time.'));
        return;
      }
      seekId.value = `${ms}-0`;
      seek([BigInt(ms), 0n]);
    },
  }, field('Time (local)', seekTime), h('button', { type: 'submit' }, 'Go to time'));

  async function refresh() {
    const grp = await get(monPath(p, g));
    if (grp.shardCount !== shardCount) {
      shardCount = grp.shardCount;
      fill(shardSel, Array.from({ length: shardCount }, (_, i) => h('option', { value: i, selected: i === shard }, `${p}:${i}`)));
      shardSel.value = String(shard);
    }
    const page = await get(monPath(p, g) + `/shards/${shard}/messages` +
      query({ direction: direction.value, limit: limit.value, cursor: cursors[cursors.length - 1] }));
    show(null);
    next = page.nextCursor;
    prevBtn.disabled = cursors.length <= 1;
    nextBtn.disabled = !next;
    const start = from ? ` from ${from.join('-')} ${direction.value === 'FORWARD' ? 'on' : 'back'}` : '';
    pageInfo.textContent = `${page.streamKey}${start}: page ${cursors.length}, ${page.records.length} record(s)${next ? '' : ', last page'}`;
    fill(records, table(['Record id', 'Time', 'Payload', 'Other fields'],
      page.records.map((r) => {
        const others = Object.entries(r.fields).filter(([k]) => r.payload === null || k !== 'payload');
        return h('tr', { 'data-record': r.recordId },
          h('td', { class: 'mono' }, r.recordId), h('td', null, time(r.recordTime)),
          h('td', { class: 'mono' }, r.payload ?? '–'),
          h('td', { class: 'mono' }, others.length ? JSON.stringify(Object.fromEntries(others)) : '–'));
      }),
      'No records on this page.'));
  }

  const el = h('section', { id: 'messages-view' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/groups' }, 'Groups'), ' / ',
      h('a', { href: '#/group/' + encodeURIComponent(p) + '/' + encodeURIComponent(g) }, `${p} / ${g}`), ' / messages'),
    h('h1', null, `Messages of ${p}:${shard}`),
    h('div', { class: 'card inline' }, field('Shard', shardSel), field('Order', direction), field('Page size', limit), seekIdForm, seekTimeForm, seekErr),
    h('div', { class: 'buttons' }, firstBtn, prevBtn, nextBtn, pageInfo), err, records);
  return { el, refresh };
}
