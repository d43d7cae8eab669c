// groups.js: the groups overview (#15 with the lag and rates of the
// Grafana group rows), led by each group's consumption status (status.js)
// and counted per status, searched, sorted by status, lag or name and
// paged in the page; the create form (#4) and delete with confirmation
// (#6).

import { call, get, groupPath, post, session } from './api.js';
import { badge, errorBox, field, fill, h, rate, shardList, showError, table } from './dom.js';
import { severity, statusBadge, statusCounts, statusLegend } from './status.js';

const PAGE_SIZE = 100;

const groupLink = (p, g) => '#/group/' + encodeURIComponent(p) + '/' + encodeURIComponent(g);

export function groupsView() {
  const body = h('div', { id: 'groups-table' }, h('p', { class: 'empty' }, 'Loading…'));
  const confirm = h('div', { id: 'delete-confirm' });
  let groups = [];

  const prefix = h('input', { name: 'streamPrefix', required: true, placeholder: 'orders' });
  const name = h('input', { name: 'consumerGroup', required: true, placeholder: 'orders-consumer' });
  const count = h('input', { name: 'initialShardCount', type: 'number', min: 1, value: '4' });
  const by = h('input', { name: 'requestedBy', required: true, value: session()?.username ?? '' });
  const reason = h('input', { name: 'reason', placeholder: 'why (optional)' });
  const createErr = errorBox();
  const created = h('p', { class: 'ok', hidden: true });
  const create = h('form', {
    id: 'create-form', class: 'card inline',
    onsubmit: async (e) => {
      e.preventDefault();
      showError(createErr, null);
      created.hidden = true;
      try {
        const body = { requestedBy: by.value.trim(), reason: reason.value.trim() || null };
        if (count.value !== '') body.initialShardCount = Number(count.value);
        const g = await post(groupPath(prefix.value.trim(), name.value.trim()), body);
        created.hidden = false;
        created.textContent = `Created ${g.streamPrefix} / ${g.consumerGroup} with ${g.shardCount} shards.`;
        await refresh();
      } catch (ex) {
        showError(createErr, ex);
      }
    },
  }, h('h2', null, 'Create group'), field('Stream prefix', prefix), field('Consumer group', name),
  field('Shards', count), field('Requested by', by), field('Reason', reason),
  h('button', { type: 'submit' }, 'Create'), createErr, created);

  // askDelete opens the confirmation panel of one group; polling leaves it alone.
  function askDelete(g) {
    const reasonIn = h('input', { name: 'deleteReason', required: true, placeholder: 'why' });
    const force = h('input', { name: 'force', type: 'checkbox' });
    const err = errorBox();
    fill(confirm, h('form', {
      class: 'card danger',
      onsubmit: async (e) => {
        e.preventDefault();
        try {
          await call('DELETE', groupPath(g.streamPrefix, g.consumerGroup),
            { requestedBy: by.value.trim() || session()?.username, reason: reasonIn.value.trim(), force: force.checked });
          fill(confirm);
          await refresh();
        } catch (ex) {
          showError(err, ex);
        }
      },
    }, h('h2', null, `Delete ${g.streamPrefix} / ${g.consumerGroup}?`),
    h('p', null, 'Deletes the coordinator metadata only; Redis streams are kept.'),
    field('Reason', reasonIn), h('label', { class: 'check' }, force, h('span', null, 'force (even with live members)')),
    h('div', { class: 'buttons' },
      h('button', { type: 'submit', class: 'danger', id: 'confirm-delete' }, 'Confirm delete'),
      h('button', { type: 'button', onclick: () => fill(confirm) }, 'Cancel')), err));
    reasonIn.focus();
  }

  // The list shows PAGE_SIZE groups a page; its rows are kept by group
  // and replaced only when what they show changed, so that a refresh keeps
  // the text selected in the others and costs little with many groups.
  const summary = h('p', { id: 'groups-status-summary', class: 'legend' });
  let page = 0;
  const search = h('input', { name: 'groupSearch', type: 'search', placeholder: 'prefix or group contains…', 'aria-label': 'search groups',
    oninput: () => { page = 0; render(); } });
  const sortBy = h('select', { name: 'groupSort', 'aria-label': 'sort groups', onchange: () => { page = 0; render(); } },
    [['status', 'status, worst first'], ['lag', 'lag, largest first'], ['name', 'name']].map(([v, l]) => h('option', { value: v }, l)));
  const pageInfo = h('span', { id: 'groups-page-info', class: 'legend' });
  const prev = h('button', { type: 'button', id: 'groups-prev', onclick: () => { page--; render(); } }, '← Previous');
  const next = h('button', { type: 'button', id: 'groups-next', onclick: () => { page++; render(); } }, 'Next →');
  const tools = h('div', { class: 'buttons wrap' }, field('Search', search), field('Sort by', sortBy), prev, next, pageInfo);
  const headers = ['Status', 'Stream prefix', 'Group', 'State', 'Group / assignment epoch', 'Metadata', 'Shards', 'Paused shards',
    'Members (live / all; desired)', 'Current / target', 'Migration', 'Lag', 'Produced / consumed', ''];
  const tbody = h('tbody');
  let rowsByKey = new Map();
  let lags = new Map();

  async function refresh() {
    const [list, rows] = await Promise.all([
      get('/monitoring/groups'),
      get('/monitoring/grafana/groups?streamPrefix=&consumerGroup=').catch(() => []),
    ]);
    lags = new Map(rows.map((r) => [r.streamPrefix + '\u0000' + r.consumerGroup, r]));
    groups = list.groups;
    render();
  }

  // render shows the groups the search selects, in the order chosen.
  function render() {
    const counts = {};
    for (const g of groups) counts[g.status || 'UNKNOWN'] = (counts[g.status || 'UNKNOWN'] ?? 0) + 1;
    fill(summary, groups.length ? [`${groups.length} group${groups.length === 1 ? '' : 's'}: `, statusCounts(counts), '.'] : '');
    if (!groups.length) {
      fill(body, table(headers, [], 'No groups yet: create one above.'));
      rowsByKey = new Map();
      pageInfo.textContent = '';
      prev.disabled = next.disabled = true;
      return;
    }
    const term = search.value.trim().toLowerCase();
    const keyOf = (g) => g.streamPrefix + '\u0000' + g.consumerGroup;
    const lagOf = (g) => lags.get(keyOf(g))?.totalLag ?? -1;
    const byName = (a, b) => (a.streamPrefix < b.streamPrefix ? -1 : a.streamPrefix > b.streamPrefix ? 1
      : a.consumerGroup < b.consumerGroup ? -1 : a.consumerGroup > b.consumerGroup ? 1 : 0);
    const order = {
      status: (a, b) => severity(b.status) - severity(a.status) || byName(a, b),
      lag: (a, b) => lagOf(b) - lagOf(a) || byName(a, b),
      name: byName,
    }[sortBy.value];
    const matching = groups.filter((g) => !term || (g.streamPrefix + '/' + g.consumerGroup).toLowerCase().includes(term)).sort(order);
    const pages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
    page = Math.min(Math.max(page, 0), pages - 1);
    const shown = matching.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
    prev.disabled = page === 0;
    next.disabled = page === pages - 1;
    pageInfo.textContent = `Page ${page + 1} of ${pages}: ${matching.length ? page * PAGE_SIZE + 1 : 0}–${page * PAGE_SIZE + shown.length} ` +
      `of ${matching.length}${term ? ' matching' : ''}`;
    const kept = new Map();
    const trs = shown.map((g) => {
      const key = keyOf(g);
      const cells = rowCells(g, lags.get(key));
      const sig = JSON.stringify(cells);
      const old = rowsByKey.get(key);
      const tr = old && old.sig === sig ? old.tr : rowOf(g, cells);
      kept.set(key, { sig, tr });
      return tr;
    });
    rowsByKey = kept;
    if (!body.contains(tbody)) fill(body, h('table', null, h('thead', null, h('tr', null, headers.map((x) => h('th', null, x)))), tbody));
    const same = trs.length === tbody.children.length && trs.every((tr, i) => tbody.children[i] === tr);
    if (!same) {
      // Rows that stay in place are kept, stale ones replaced, others moved.
      const fresh = new Set(trs);
      trs.forEach((tr, i) => {
        const at = tbody.children[i];
        if (at === tr) return;
        if (!at) tbody.append(tr);
        else if (fresh.has(at)) at.before(tr);
        else at.replaceWith(tr);
      });
      while (tbody.children.length > trs.length) tbody.lastElementChild.remove();
    }
    if (!trs.length) tbody.replaceChildren(h('tr', null, h('td', { colspan: headers.length, class: 'empty' }, 'No group matches the search.')));
  }

  // rowCells are the texts of g's row (r: its Grafana row, if any).
  function rowCells(g, r) {
    const m = g.activeMigration;
    return {
      status: g.status || 'UNKNOWN', state: g.state, epochs: `${g.groupEpoch} / ${g.assignmentEpoch}`, meta: g.metadataVersion,
      shards: g.shardCount, paused: shardList(g.pausedShards),
      members: (r ? `${r.activeMembers} live / ${r.totalMembers}` : String(Object.keys(g.targetAssignmentSummary).length)) +
        (g.desiredMembers !== undefined && g.desiredMembers !== null ? `; desired ${g.desiredMembers}` : ''),
      current: r ? `${r.currentShards} / ${r.targetShards}` : '–',
      migration: m ? [m.state, ` ${m.fromShardCount} → ${m.toShardCount}`] : null,
      lag: r?.totalLag ?? '–', rates: r ? `${rate(r.producedPerSecond)} / ${rate(r.consumedPerSecond)}` : '–',
    };
  }

  function rowOf(g, c) {
    return h('tr', { 'data-group': g.streamPrefix + '/' + g.consumerGroup, 'data-status': c.status },
      h('td', { class: 'group-status' }, statusBadge(c.status)),
      h('td', null, g.streamPrefix),
      h('td', null, h('a', { href: groupLink(g.streamPrefix, g.consumerGroup) }, g.consumerGroup)),
      h('td', null, badge(c.state)),
      h('td', null, c.epochs),
      h('td', null, c.meta),
      h('td', { class: 'shard-count' }, c.shards),
      h('td', { class: 'paused-shards' }, c.paused),
      h('td', { class: 'member-count' }, c.members),
      h('td', null, c.current),
      h('td', null, c.migration ? [badge(c.migration[0]), c.migration[1]] : '–'),
      h('td', { class: 'lag' }, c.lag),
      h('td', { class: 'rates' }, c.rates),
      h('td', null, h('button', { type: 'button', class: 'small danger', onclick: () => askDelete(g) }, 'Delete')));
  }

  const el = h('section', { id: 'groups-view' }, h('h1', null, 'Consumer groups'), create, confirm, summary, tools, body, statusLegend());
  return { el, refresh };
}
