// messages.js: the message explorer of one shard (#22), page by page.

import { get, monPath, query } from './api.js';
import { errorBox, field, fill, h, showError, table, time } from './dom.js';

export function messagesView(p, g, shard) {
  const base = '#/messages/' + encodeURIComponent(p) + '/' + encodeURIComponent(g) + '/';
  const shardSel = h('select', { name: 'shard', onchange: () => { location.hash = base + shardSel.value; } });
  const direction = h('select', { name: 'direction', onchange: () => first() },
    h('option', { value: 'BACKWARD' }, 'newest first (BACKWARD)'), h('option', { value: 'FORWARD' }, 'oldest first (FORWARD)'));
  const limit = h('input', { name: 'limit', type: 'number', min: 1, max: 1000, value: '10', onchange: () => first() });
  const records = h('div', { id: 'records' });
  const pageInfo = h('span', { id: 'page-info' });
  const err = errorBox();
  // cursors[k] is the cursor of page k (page 0 has none); next is the
  // cursor of the page after the one shown, null on the last page.
  let cursors = [null];
  let next = null;
  let shardCount = -1;

  const prevBtn = h('button', { type: 'button', id: 'prev-page', onclick: () => { cursors.pop(); refresh().catch((e) => showError(err, e)); } }, '← Previous page');
  const nextBtn = h('button', { type: 'button', id: 'next-page', onclick: () => { cursors.push(next); refresh().catch((e) => showError(err, e)); } }, 'Next page →');
  const firstBtn = h('button', { type: 'button', onclick: () => first() }, 'First page');
  function first() {
    cursors = [null];
    refresh().catch((e) => showError(err, e));
  }

  async function refresh() {
    const grp = await get(monPath(p, g));
    if (grp.shardCount !== shardCount) {
      shardCount = grp.shardCount;
      fill(shardSel, Array.from({ length: shardCount }, (_, i) => h('option', { value: i, selected: i === shard }, `${p}:${i}`)));
      shardSel.value = String(shard);
    }
    const page = await get(monPath(p, g) + `/shards/${shard}/messages` +
      query({ direction: direction.value, limit: limit.value, cursor: cursors[cursors.length - 1] }));
    showError(err, null);
    next = page.nextCursor;
    prevBtn.disabled = cursors.length <= 1;
    nextBtn.disabled = !next;
    pageInfo.textContent = `${page.streamKey}: page ${cursors.length}, ${page.records.length} record(s)${next ? '' : ', last page'}`;
    fill(records, table(['Record id', 'Time', 'Payload', 'Fields'],
      page.records.map((r) => h('tr', { 'data-record': r.recordId },
        h('td', { class: 'mono' }, r.recordId), h('td', null, time(r.recordTime)),
        h('td', { class: 'mono' }, r.payload ?? '–'), h('td', { class: 'mono' }, JSON.stringify(r.fields)))),
      'No records on this page.'));
  }

  const el = h('section', { id: 'messages-view' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/groups' }, 'Groups'), ' / ',
      h('a', { href: '#/group/' + encodeURIComponent(p) + '/' + encodeURIComponent(g) }, `${p} / ${g}`), ' / messages'),
    h('h1', null, `Messages of ${p}:${shard}`),
    h('div', { class: 'card inline' }, field('Shard', shardSel), field('Order', direction), field('Page size', limit)),
    h('div', { class: 'buttons' }, firstBtn, prevBtn, nextBtn, pageInfo), err, records);
  return { el, refresh };
}
