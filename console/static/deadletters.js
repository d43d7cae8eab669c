// deadletters.js: a group's dead letters (GET …/dead-letters), newest
// first, with the group that dead-lettered each, where it came from, its
// delivery count and last error: the group's own (and those naming no
// group) or, ticked, those of every group sharing the dead-letter stream;
// selected entries are redriven to their shard or deleted (POST
// …/dead-letters/redrive|delete), the outcome of each shown.

import { get, groupPath, monPath, post, query, session } from './api.js';
import { errorBox, field, fill, h, showError, table } from './dom.js';

export function deadLettersView(p, g) {
  const list = h('div', { id: 'dead-letters' });
  const info = h('p', { id: 'dead-letter-info', class: 'legend' });
  const outcome = h('div', { id: 'dead-letter-outcome' });
  const by = h('input', { name: 'dlRequestedBy', required: true, value: session()?.username ?? '' });
  const reason = h('input', { name: 'dlReason', value: 'via console' });
  const allGroups = h('input', { name: 'dlAllGroups', type: 'checkbox', onchange: () => refresh().catch((ex) => showError(err, ex)) });
  const err = errorBox();
  const selected = new Set();

  async function act(action) {
    showError(err, null);
    if (!selected.size) {
      showError(err, new Error('Select at least one dead letter.'));
      return;
    }
    try {
      const r = await post(groupPath(p, g) + '/dead-letters/' + action,
        { ids: [...selected], requestedBy: by.value.trim(), reason: reason.value.trim() });
      selected.clear();
      fill(outcome, table(['Id', 'Outcome', 'To', 'New id', 'Error'],
        r.results.map((x) => h('tr', { 'data-outcome': x.id }, h('td', { class: 'mono' }, x.id), h('td', null, x.status),
          h('td', { class: 'mono' }, x.stream ?? '–'), h('td', { class: 'mono' }, x.newId ?? '–'),
          h('td', null, x.errorCode ? `${x.errorCode}: ${x.message}` : '–')))));
      await refresh();
    } catch (ex) {
      showError(err, ex);
    }
  }

  async function refresh() {
    const page = await get(monPath(p, g) + '/dead-letters' + query({ limit: 100, allGroups: allGroups.checked ? 'true' : undefined }));
    info.textContent = `${page.stream}: ${page.length} entr${page.length === 1 ? 'y' : 'ies'} of all groups; ` +
      `${page.entries.length} ${allGroups.checked ? '' : `of ${g} (or no group) `}shown${page.nextCursor ? ' (the newest)' : ''}`;
    for (const id of [...selected]) if (!page.entries.some((d) => d.id === id)) selected.delete(id);
    fill(list, table(['', 'Id', 'Group', 'Shard', 'Source id', 'Deliveries', 'Last error', 'Fields'],
      page.entries.map((d) => h('tr', { 'data-dead-letter': d.id },
        h('td', null, h('input', {
          type: 'checkbox', checked: selected.has(d.id),
          onchange: (e) => (e.target.checked ? selected.add(d.id) : selected.delete(d.id)),
        })),
        h('td', { class: 'mono' }, d.id), h('td', { class: 'group' }, d.group || '–'), h('td', null, d.sourceShard ?? d.sourceStream ?? '–'),
        h('td', { class: 'mono' }, d.sourceId || '–'), h('td', null, d.deliveries),
        h('td', { class: 'error-text' }, d.error || '–'), h('td', { class: 'mono' }, JSON.stringify(d.fields)))),
      'No dead letters.'));
  }

  const el = h('section', { id: 'dead-letters-view' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/groups' }, 'Groups'), ' / ',
      h('a', { href: '#/group/' + encodeURIComponent(p) + '/' + encodeURIComponent(g) }, `${p} / ${g}`), ' / dead letters'),
    h('h1', null, `Dead letters of ${p} / ${g}`), info,
    h('label', { class: 'check' }, allGroups, `every group's (the stream is shared; ${g} acts on its own only)`),
    h('div', { class: 'card inline' }, field('Requested by', by), field('Reason', reason),
      h('button', { type: 'button', id: 'redrive', onclick: () => act('redrive') }, 'Redrive selected'),
      h('button', { type: 'button', id: 'delete-dead-letters', class: 'danger', onclick: () => act('delete') }, 'Delete selected'), err),
    list, h('h2', null, 'Last action'), outcome);
  return { el, refresh };
}
