// group.js: one group: summary (#16), members (#17) with lease countdown
// and capacity, target vs current assignment grid (#18), migrations (#20)
// with scale (#8) and rollback (#10), and the recent audit events
// (recentMutations of #16); the throughput with the lag trend, the shard
// positions with lag and pending and the offset reset (positions.js).

import { get, groupPath, monPath, post, session } from './api.js';
import { positionsPanel } from './positions.js';
import { badge, errorBox, field, fill, h, indexes, seconds, shardList, showError, table, time } from './dom.js';

export function groupView(p, g) {
  const summary = h('div', { id: 'group-summary', class: 'card' });
  const members = h('div', { id: 'members' });
  const grid = h('div', { id: 'assignment-grid' });
  const revokes = h('div', { id: 'revoke-progress' });
  const violations = h('div', { id: 'violations' });
  const migrations = h('div', { id: 'migrations' });
  const audit = h('div', { id: 'audit' });
  const positions = positionsPanel(p, g, () => refresh());

  const by = h('input', { name: 'requestedBy', required: true, value: session()?.username ?? '' });
  const reason = h('input', { name: 'reason', required: true, value: 'via console' });
  const target = h('input', { name: 'targetShardCount', type: 'number', min: 0, required: true });
  const actionErr = errorBox();
  const actionOk = h('p', { class: 'ok', hidden: true });
  const who = () => ({ requestedBy: by.value.trim(), reason: reason.value.trim() });

  // act runs one mutation and shows its outcome under the scale form.
  async function act(what, fn) {
    showError(actionErr, null);
    actionOk.hidden = true;
    try {
      const m = await fn();
      actionOk.hidden = false;
      actionOk.textContent = `${what}: ${m.reshardingId} ${m.fromShardCount} → ${m.toShardCount} ${m.state}`;
      await refresh();
    } catch (ex) {
      showError(actionErr, ex);
    }
  }

  const scale = h('form', {
    id: 'scale-form', class: 'card inline',
    onsubmit: (e) => {
      e.preventDefault();
      act('Scale', () => post(groupPath(p, g) + '/scale', { targetShardCount: Number(target.value), ...who() }));
    },
  }, h('h2', null, 'Scale'), field('Target shard count', target), field('Requested by', by), field('Reason', reason),
  h('button', { type: 'submit' }, 'Scale'), actionErr, actionOk);

  const rollback = (id) => act('Rollback', () =>
    post(groupPath(p, g) + '/migrations/' + encodeURIComponent(id) + '/rollback', who()));

  async function refresh() {
    const [grp, mem, asg, mig] = await Promise.all([
      get(monPath(p, g)), get(monPath(p, g) + '/members'), get(monPath(p, g) + '/assignments'), get(monPath(p, g) + '/migrations'),
      positions.refresh(),
    ]);
    if (target.value === '') target.value = grp.shardCount;
    renderSummary(grp);
    renderMembers(mem.members);
    renderGrid(grp, mem.members, asg);
    fill(revokes, table(['Member', 'Revoking shards'],
      Object.entries(asg.revokeProgress).map(([m, s]) => h('tr', null, h('td', null, m), h('td', null, shardList(s)))),
      'Nothing being revoked.'));
    fill(violations, asg.invariantViolations.length
      ? h('ul', { class: 'violations' }, asg.invariantViolations.map((v) => h('li', null, v)))
      : h('p', { class: 'ok' }, 'No invariant violations.'));
    renderMigrations(mig);
    fill(audit, table(['Time', 'Action', 'Outcome', 'Status', 'Principal', 'Requested by', 'Reason'],
      grp.recentMutations.map((e) => h('tr', null, h('td', null, time(e.timestamp)), h('td', null, e.action),
        h('td', null, badge(e.outcome)), h('td', null, e.status), h('td', null, e.principal ?? '–'),
        h('td', null, e.requestedBy ?? '–'), h('td', null, e.reason ?? '–'))),
      'No audit events recorded.'));
  }

  function renderSummary(grp) {
    const m = grp.activeMigration;
    fill(summary, h('dl', null,
      h('dt', null, 'State'), h('dd', { id: 'group-state' }, badge(grp.state)),
      h('dt', null, 'Group epoch'), h('dd', null, grp.groupEpoch),
      h('dt', null, 'Assignment epoch'), h('dd', null, grp.assignmentEpoch),
      h('dt', null, 'Metadata version'), h('dd', null, grp.metadataVersion),
      h('dt', null, 'Shards'), h('dd', { id: 'group-shards' }, grp.shardCount),
      h('dt', null, 'Active migration'), h('dd', null, m ? [badge(m.state), ` ${m.fromShardCount} → ${m.toShardCount}`] : 'none')));
  }

  function renderMembers(list) {
    const now = Date.now();
    fill(members, table(['Member', 'Name', 'State', 'Epoch', 'Capacity (busy / max)', 'Current', 'Revoking', 'Last heartbeat', 'Lease'],
      list.map((m) => {
        const left = Date.parse(m.memberLeaseExpiresAt) - now;
        return h('tr', { 'data-member': m.memberId },
          h('td', null, m.memberId), h('td', null, m.memberName), h('td', null, badge(m.state)), h('td', null, m.memberEpoch),
          h('td', null, `${m.activeConsumerWorkers} / ${m.runtimeMaxConcurrency}`),
          h('td', null, shardList(m.currentAssignment)), h('td', null, shardList(m.revoking)),
          h('td', null, m.lastHeartbeatAt ? seconds(now - Date.parse(m.lastHeartbeatAt)) + ' ago' : '–'),
          h('td', { class: left > 0 ? 'lease' : 'lease expired' }, isNaN(left) ? '–' : left > 0 ? 'expires in ' + seconds(left) : 'expired'));
      }), 'No members have joined.'));
  }

  // renderGrid draws shards × members: T = in the target, C = in the
  // current assignment, R = being revoked.
  function renderGrid(grp, list, asg) {
    const ids = [...new Set([...list.filter((m) => m.state === 'ACTIVE' || m.state === 'STARTING' || m.state === 'LEAVING').map((m) => m.memberId),
      ...Object.keys(asg.targetAssignment), ...Object.keys(asg.revokeProgress),
      ...Object.entries(asg.currentAssignments).filter(([, s]) => s.length).map(([m]) => m)])].sort();
    const sets = (o) => new Map(Object.entries(o).map(([m, s]) => [m, new Set(indexes(s))]));
    const tgt = sets(asg.targetAssignment), cur = sets(asg.currentAssignments), rev = sets(asg.revokeProgress);
    let n = grp.shardCount;
    for (const m of [...cur.values(), ...rev.values()]) for (const i of m) n = Math.max(n, i + 1);
    const rows = [];
    for (let i = 0; i < n; i++) {
      const link = '#/messages/' + encodeURIComponent(p) + '/' + encodeURIComponent(g) + '/' + i;
      rows.push(h('tr', { 'data-shard': i, class: i >= grp.shardCount ? 'removed' : null },
        h('th', null, i < grp.shardCount ? h('a', { href: link, title: 'messages of shard ' + i }, ':' + i) : ':' + i + ' (removed)'),
        ids.map((m) => {
          const t = tgt.get(m)?.has(i), c = cur.get(m)?.has(i), r = rev.get(m)?.has(i);
          const cls = r ? 'revoking' : t && c ? 'owned' : t ? 'pending' : c ? 'releasing' : '';
          return h('td', { class: 'cell ' + cls, 'data-member': m }, [t && 'T', c && 'C', r && 'R'].filter(Boolean).join(' '));
        })));
    }
    fill(grid, ids.length || n ? h('table', { class: 'grid' },
      h('thead', null, h('tr', null, h('th', null, 'shard'), ids.map((m) => h('th', null, m)))),
      h('tbody', null, rows)) : h('p', { class: 'empty' }, 'No shards.'),
    h('p', { class: 'legend' }, h('span', { class: 'cell owned' }, 'T C'), ' target and current ',
      h('span', { class: 'cell pending' }, 'T'), ' target, not yet read ',
      h('span', { class: 'cell releasing' }, 'C'), ' read, no longer target ',
      h('span', { class: 'cell revoking' }, 'R'), ' being revoked'));
  }

  function renderMigrations(mig) {
    fill(migrations, table(['Id', 'From → to', 'State', 'Created', 'Updated', ''],
      mig.migrations.slice().reverse().map((m) => h('tr', { 'data-migration': m.reshardingId },
        h('td', null, m.reshardingId), h('td', null, `${m.fromShardCount} → ${m.toShardCount}`), h('td', null, badge(m.state)),
        h('td', null, time(m.createdAt)), h('td', null, time(m.updatedAt)),
        h('td', null, m.state === 'ACTIVE' && m.reshardingId === mig.activeReshardingId
          ? h('button', { type: 'button', class: 'small', onclick: () => rollback(m.reshardingId) }, 'Roll back') : null))),
      'No migrations.'));
  }

  const el = h('section', { id: 'group-view' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/groups' }, 'Groups'), ' / ', p, ' / ', g),
    h('h1', null, `${p} / ${g}`), summary,
    h('h2', null, 'Throughput'), positions.throughput,
    h('h2', null, 'Members'), members,
    h('h2', null, 'Assignment: target vs current'), grid,
    h('h2', null, 'Shard positions: lag and pending'), positions.el,
    h('div', { class: 'cols' }, h('div', null, h('h2', null, 'Revoke progress'), revokes),
      h('div', null, h('h2', null, 'Invariant violations'), violations)),
    h('h2', null, 'Migrations'), scale, migrations,
    h('h2', null, 'Recent audit events'), audit);
  return { el, refresh };
}
