// deadletters.js: a group's dead letters (the newest FETCH of GET
// …/dead-letters) with the group that dead-lettered each, where it came
// from, its delivery count and last error: the group's own (and those
// naming no group, which are listed but cannot be redriven or deleted)
// or, ticked, those of every group sharing the
// dead-letter stream. They are grouped by last error (the largest group
// first, newest first within one; a heading row names the error) and
// shown PAGE_SIZE a page. Entries are
// selected one at a time, a page at a time or an error at a time (also
// across pages), and the selected are redriven to their shard or deleted
// (POST …/dead-letters/redrive|delete), the outcome of each shown.

import { get, groupPath, monPath, post, query, session } from './api.js';
import { errorBox, field, fill, h, showError, table } from './dom.js';

const FETCH = 100;
const PAGE_SIZE = 20;

export function deadLettersView(p, g) {
  const list = h('div', { id: 'dead-letters' });
  const info = h('p', { id: 'dead-letter-info', class: 'legend' });
  const errors = h('div', { id: 'dead-letter-errors', class: 'buttons wrap' });
  const outcome = h('div', { id: 'dead-letter-outcome' });
  const by = h('input', { name: 'dlRequestedBy', required: true, value: session()?.username ?? '' });
  const reason = h('input', { name: 'dlReason', value: 'via console' });
  const allGroups = h('input', { name: 'dlAllGroups', type: 'checkbox', onchange: () => refresh().catch((ex) => showError(err, ex)) });
  const err = errorBox();
  const selected = new Set();
  const pageInfo = h('span', { id: 'dl-page-info' });
  const prevBtn = h('button', { type: 'button', id: 'dl-prev', onclick: () => turnTo(page - 1) }, '← Previous page');
  const nextBtn = h('button', { type: 'button', id: 'dl-next', onclick: () => turnTo(page + 1) }, 'Next page →');
  const clearBtn = h('button', { type: 'button', id: 'dl-clear', onclick: () => { selected.clear(); render(); } }, 'Clear selection');
  // entries are the fetched dead letters in display order; groups the
  // distinct errors in that order, each {error, entries}.
  let entries = [];
  let groups = [];
  let page = 0;

  function turnTo(n) {
    page = n;
    render();
  }

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
    const res = await get(monPath(p, g) + '/dead-letters' + query({ limit: FETCH, allGroups: allGroups.checked ? 'true' : undefined }));
    info.textContent = `${res.stream}: ${res.length} entr${res.length === 1 ? 'y' : 'ies'} of all groups; ` +
      `${res.entries.length} ${allGroups.checked ? '' : `of ${g} (or no group) `}listed${res.nextCursor ? ` (the newest ${FETCH})` : ''}`;
    for (const id of [...selected]) if (!res.entries.some((d) => d.id === id)) selected.delete(id);
    const byError = new Map();
    for (const d of res.entries) {
      const e = d.error || '';
      if (!byError.has(e)) byError.set(e, []);
      byError.get(e).push(d);
    }
    groups = [...byError].map(([error, list]) => ({ error, entries: list }))
      .sort((a, b) => b.entries.length - a.entries.length || a.error.localeCompare(b.error));
    entries = groups.flatMap((x) => x.entries);
    render();
  }

  // box is a checkbox ticked when every one of ids is selected (half when
  // some are) that selects or clears them all.
  function box(ids, attrs) {
    const n = ids.filter((id) => selected.has(id)).length;
    const el = h('input', {
      type: 'checkbox', checked: ids.length > 0 && n === ids.length, ...attrs,
      onchange: (e) => {
        for (const id of ids) if (e.target.checked) selected.add(id); else selected.delete(id);
        render();
      },
    });
    el.indeterminate = n > 0 && n < ids.length;
    return el;
  }

  const errorLabel = (e) => e || '(no error recorded)';

  function render() {
    const pages = Math.max(1, Math.ceil(entries.length / PAGE_SIZE));
    page = Math.min(Math.max(page, 0), pages - 1);
    const from = page * PAGE_SIZE;
    const shown = entries.slice(from, from + PAGE_SIZE);
    prevBtn.disabled = page === 0;
    nextBtn.disabled = page >= pages - 1;
    clearBtn.disabled = !selected.size;
    pageInfo.textContent = (entries.length ? `Page ${page + 1} of ${pages}: ${from + 1}–${from + shown.length} of ${entries.length}; ` : '') +
      `${selected.size} selected`;
    fill(errors, groups.length > 1 ? ['By error:', groups.map((x) => h('button', {
      type: 'button', class: 'small', 'data-error-link': x.error, onclick: () => turnTo(Math.floor(entries.indexOf(x.entries[0]) / PAGE_SIZE)),
    }, `${errorLabel(x.error)} (${x.entries.length})`))] : null);
    const rows = [];
    for (const [i, d] of shown.entries()) {
      const e = d.error || '';
      if (i === 0 || (shown[i - 1].error || '') !== e) {
        const grp = groups.find((x) => x.error === e);
        const continued = grp.entries[0] !== d;
        rows.push(h('tr', { class: 'error-group', 'data-error-group': e },
          h('td', null, box(grp.entries.map((x) => x.id), { title: 'select every dead letter with this error' })),
          h('td', { colspan: 6 }, 'Last error: ', h('span', { class: 'error-text' }, errorLabel(e)),
            ` — ${grp.entries.length} dead letter${grp.entries.length === 1 ? '' : 's'}${continued ? ' (continued)' : ''}`)));
      }
      rows.push(h('tr', { 'data-dead-letter': d.id },
        h('td', null, h('input', {
          type: 'checkbox', checked: selected.has(d.id),
          onchange: (ev) => {
            if (ev.target.checked) selected.add(d.id); else selected.delete(d.id);
            render();
          },
        })),
        h('td', { class: 'mono' }, d.id), h('td', { class: 'group' }, d.group || '–'), h('td', null, d.sourceShard ?? d.sourceStream ?? '–'),
        h('td', { class: 'mono' }, d.sourceId || '–'), h('td', null, d.deliveries), h('td', { class: 'mono' }, JSON.stringify(d.fields))));
    }
    const pageBox = box(shown.map((d) => d.id), { id: 'dl-select-page', title: 'select every dead letter on this page' });
    fill(list, table([pageBox, 'Id', 'Group', 'Shard', 'Source id', 'Deliveries', 'Fields'], rows, 'No dead letters.'));
  }

  const el = h('section', { id: 'dead-letters-view' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/groups' }, 'Groups'), ' / ',
      h('a', { href: '#/group/' + encodeURIComponent(p) + '/' + encodeURIComponent(g) }, `${p} / ${g}`), ' / dead letters'),
    h('h1', null, `Dead letters of ${p} / ${g}`), info,
    h('label', { class: 'check' }, allGroups, `every group's (the stream is shared; ${g} acts on its own only)`),
    h('div', { class: 'card inline' }, field('Requested by', by), field('Reason', reason),
      h('button', { type: 'button', id: 'redrive', onclick: () => act('redrive') }, 'Redrive selected'),
      h('button', { type: 'button', id: 'delete-dead-letters', class: 'danger', onclick: () => act('delete') }, 'Delete selected'), err),
    errors, h('div', { class: 'buttons' }, prevBtn, nextBtn, clearBtn, pageInfo),
    list, h('h2', null, 'Last action'), outcome);
  return { el, refresh };
}
