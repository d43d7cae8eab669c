// group.js: one group: summary (#16) led by its consumption status and
// desiredMembers, each shard's status with its evidence (GET …/status,
// status.js), the scaling signal with its inputs (GET …/scaling),
// members (#17) with lease countdown and capacity, target vs current
// assignment grid (#18) with each shard's status and the paused shards,
// the assignment history (history.js), migrations (#20) with scale (#8)
// and rollback (#10), and the recent audit events (recentMutations of
// #16); the throughput with the lag trend, the shard positions with lag
// and pending, the offset reset and the pause form (positions.js).

import { ApiError, get, groupPath, monPath, post, session } from './api.js';
import { positionsPanel } from './positions.js';
import { historyPanel } from './history.js';
import { severity, statusBadge, statusCounts, statusLegend } from './status.js';
import { age, badge, count, errorBox, field, fill, h, indexes, rate, seconds, shardList, showError, table, time } from './dom.js';

const dash = (v) => (v === null || v === undefined ? '–' : v);

// ended tells whether the coordinator ended member m's lease (EXPIRED or
// FENCED): it reads nothing, whatever it last reported. The browser's
// clock is not asked: a clock ahead of the coordinator's would end live
// members.
const ended = (m) => m.state === 'EXPIRED' || m.state === 'FENCED';

export function groupView(p, g) {
  const summary = h('div', { id: 'group-summary', class: 'card' });
  const statusInfo = h('p', { id: 'status-info', class: 'legend' });
  const shardStatus = h('div', { id: 'shard-status' });
  const scaling = h('p', { id: 'scaling-info' });
  const history = historyPanel(p, g);
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

  // evaluated reads the consumption status or the scaling signal (what:
  // status, scaling); without them (no Redis: 503) the page says why and
  // shows the rest.
  async function evaluated(what) {
    try {
      return await get(groupPath(p, g) + '/' + what);
    } catch (ex) {
      if (!(ex instanceof ApiError) || ex.status === 401) throw ex;
      return { error: ex };
    }
  }

  async function refresh() {
    const [grp, mem, asg, mig, st, sc, off] = await Promise.all([
      get(monPath(p, g)), get(monPath(p, g) + '/members'), get(monPath(p, g) + '/assignments'), get(monPath(p, g) + '/migrations'),
      evaluated('status'), evaluated('scaling'), positions.refresh(), history.refresh(),
    ]);
    if (target.value === '') target.value = grp.shardCount;
    history.shards(grp.shardCount);
    renderSummary(grp, st, off);
    renderStatus(st);
    renderScaling(sc);
    renderMembers(mem.members);
    renderGrid(grp, mem.members, asg, st);
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

  // since renders an instant with how long ago it was.
  const since = (iso) => (iso ? [time(iso), ` (${age(Math.max(0, (Date.now() - Date.parse(iso)) / 1000))} ago)`] : '–');

  // renderSummary leads with the group's health: status, lag and lag as
  // time (off: the offsets read, null without Redis), desired members and
  // paused shards.
  function renderSummary(grp, st, off) {
    const m = grp.activeMigration;
    fill(summary, h('dl', null,
      h('dt', null, 'Status'), h('dd', { id: 'group-status' }, statusBadge(st.error ? grp.status : st.status)),
      h('dt', null, 'Status since'), h('dd', null, st.error ? '–' : since(st.since)),
      h('dt', null, 'Lag'), h('dd', { id: 'group-lag' }, off ? count(off.totalLag) : '–'),
      h('dt', { title: 'age of the oldest entry not yet delivered to the group' }, 'Lag as time'),
      h('dd', { id: 'group-lag-age' }, off ? age(off.oldestUnreadAgeSeconds) : '–'),
      h('dt', { title: 'members that drain the backlog within the target drain time while keeping up with ingest (GET …/scaling)' }, 'Desired members'),
      h('dd', { id: 'desired-members' }, dash(grp.desiredMembers)),
      h('dt', null, 'Paused shards'), h('dd', { id: 'group-paused' }, shardList(grp.pausedShards))),
    h('dl', { class: 'second' },
      h('dt', null, 'State'), h('dd', { id: 'group-state' }, badge(grp.state)),
      h('dt', null, 'Group epoch'), h('dd', null, grp.groupEpoch),
      h('dt', null, 'Assignment epoch'), h('dd', null, grp.assignmentEpoch),
      h('dt', null, 'Metadata version'), h('dd', null, grp.metadataVersion),
      h('dt', null, 'Shards'), h('dd', { id: 'group-shards' }, grp.shardCount),
      h('dt', null, 'Active migration'), h('dd', null, m ? [badge(m.state), ` ${m.fromShardCount} → ${m.toShardCount}`] : 'none')));
  }

  // renderStatus shows the counts per status and each shard's status with
  // the evidence it was decided on, the most severe first.
  function renderStatus(st) {
    if (st.error) {
      statusInfo.textContent = 'Consumption status unavailable: ' + st.error.message;
      fill(shardStatus);
      return;
    }
    fill(statusInfo, st.status === 'UNKNOWN'
      ? 'Not evaluated yet: the coordinator evaluates the group at each lag-refresh round.'
      : ['Shards: ', statusCounts(st.counts), `. Evaluated ${time(st.evaluatedAt)} over a window of up to ${st.windowSamples} samples a shard.`]);
    const lag = (e) => (e.lagStart === null && e.lagEnd === null ? '–' : `${dash(e.lagStart)} → ${dash(e.lagEnd)}`);
    fill(shardStatus, table(['Shard', 'Status', 'Since', 'Lag (window start → end)', 'Ingest', 'Consume', 'Holders', 'Position', 'Window'],
      st.shards.slice().sort((a, b) => severity(b.status) - severity(a.status) || a.shardIndex - b.shardIndex).map((s) => {
        const e = s.evidence;
        return h('tr', { 'data-shard-status': s.shardIndex, 'data-status': s.status },
          h('td', null, s.shardIndex), h('td', { class: 'status-cell' }, statusBadge(s.status)), h('td', null, since(s.since)),
          h('td', { class: 'lag' }, lag(e)), h('td', null, rate(e.ingestRate)), h('td', null, rate(e.consumeRate)),
          h('td', null, e.holders, e.paused ? ' (paused)' : ''), h('td', { class: 'mono' }, dash(e.position)),
          h('td', null, `${count(e.samples)} sample${e.samples === 1 ? '' : 's'}`, e.windowStart ? `, ${time(e.windowStart)} – ${time(e.windowEnd)}` : ''));
      }), 'No shard evaluated yet.'));
  }

  // renderScaling shows desiredMembers with the inputs it was computed from.
  function renderScaling(sc) {
    if (sc.error) {
      scaling.textContent = 'Scaling signal unavailable: ' + sc.error.message;
      return;
    }
    const drain = sc.predictedDrainSeconds === null ? 'they cannot catch up' : 'predicted drain ' + age(sc.predictedDrainSeconds);
    fill(scaling, h('strong', null, `Desired members: ${sc.desiredMembers}`),
      ` (recommended now ${sc.recommendedMembers}; ${sc.members} hold shards; at most the ${sc.shardCount} shards). `,
      `Ingest ${rate(sc.ingestRate)}, backlog ${count(sc.backlog)}, ${rate(sc.consumeRatePerMember)} per member `,
      sc.consumeRateMeasured ? '(measured)' : '(not measured yet: scaling.fallback-rate-per-member)',
      `: ${drain} with ${sc.desiredMembers}, target ${age(sc.targetDrainSeconds)}.`);
  }

  function renderMembers(list) {
    const now = Date.now();
    fill(members, table(['Member', 'Name', 'State', 'Epoch', 'Capacity (busy / max)', 'Current', 'Revoking', 'Last heartbeat', 'Lease'],
      list.map((m) => {
        const left = Date.parse(m.memberLeaseExpiresAt) - now;
        return h('tr', { 'data-member': m.memberId, class: ended(m) ? 'ended' : null },
          h('td', null, m.memberId), h('td', null, m.memberName), h('td', null, badge(m.state)), h('td', null, m.memberEpoch),
          h('td', null, `${m.activeConsumerWorkers} / ${m.runtimeMaxConcurrency}`),
          h('td', { class: 'current' }, ended(m) ? ['none (lease ended', m.currentAssignment?.length ? '; last reported ' + shardList(m.currentAssignment) : '', ')'] : shardList(m.currentAssignment)),
          h('td', null, shardList(m.revoking)),
          h('td', null, m.lastHeartbeatAt ? seconds(now - Date.parse(m.lastHeartbeatAt)) + ' ago' : '–'),
          h('td', { class: left > 0 ? 'lease' : 'lease expired' }, isNaN(left) ? '–' : left > 0 ? 'expires in ' + seconds(left) : 'expired'));
      }), 'No members have joined.'));
  }

  // renderGrid draws shards × members: T = in the target, C = in the
  // current assignment, R = being revoked; a member whose lease ended reads
  // nothing, so its last reported shards show as "ended", never as C. Each
  // shard's row leads with its status; a paused shard says so.
  function renderGrid(grp, list, asg, st) {
    const gone = new Set(list.filter(ended).map((m) => m.memberId));
    const ids = [...new Set([...list.filter((m) => m.state === 'ACTIVE' || m.state === 'STARTING' || m.state === 'LEAVING').map((m) => m.memberId),
      ...Object.keys(asg.targetAssignment), ...Object.keys(asg.revokeProgress),
      ...Object.entries(asg.currentAssignments).filter(([, s]) => s.length).map(([m]) => m)])].sort();
    const sets = (o) => new Map(Object.entries(o).map(([m, s]) => [m, new Set(indexes(s))]));
    const tgt = sets(asg.targetAssignment), cur = sets(asg.currentAssignments), rev = sets(asg.revokeProgress);
    const paused = new Set(indexes(asg.pausedShards ?? grp.pausedShards));
    const statusOf = new Map((st.shards ?? []).map((s) => [s.shardIndex, s.status]));
    let n = grp.shardCount;
    for (const m of [...cur.values(), ...rev.values()]) for (const i of m) n = Math.max(n, i + 1);
    const rows = [];
    for (let i = 0; i < n; i++) {
      const link = '#/messages/' + encodeURIComponent(p) + '/' + encodeURIComponent(g) + '/' + i;
      const status = statusOf.get(i);
      rows.push(h('tr', { 'data-shard': i, 'data-status': status ?? null, class: i >= grp.shardCount ? 'removed' : paused.has(i) ? 'paused' : null },
        h('th', null, i < grp.shardCount ? h('a', { href: link, title: 'messages of shard ' + i }, ':' + i) : ':' + i + ' (removed)',
          paused.has(i) ? h('span', { class: 'paused-mark' }, ' paused') : null),
        h('td', { class: 'shard-status' }, status ? statusBadge(status) : '–'),
        ids.map((m) => {
          const t = tgt.get(m)?.has(i), r = rev.get(m)?.has(i);
          const c = cur.get(m)?.has(i) && !gone.has(m), e = cur.get(m)?.has(i) && gone.has(m);
          const cls = r ? 'revoking' : t && c ? 'owned' : t ? 'pending' : c ? 'releasing' : e ? 'ended' : '';
          return h('td', { class: 'cell ' + cls, 'data-member': m }, [t && 'T', c && 'C', r && 'R', e && 'ended'].filter(Boolean).join(' '));
        })));
    }
    fill(grid, ids.length || n ? h('table', { class: 'grid' },
      h('thead', null, h('tr', null, h('th', null, 'shard'), h('th', null, 'status'),
        ids.map((m) => h('th', { class: gone.has(m) ? 'ended' : null }, m, gone.has(m) ? ' (lease ended)' : '')))),
      h('tbody', null, rows)) : h('p', { class: 'empty' }, 'No shards.'),
    h('p', { class: 'legend' }, h('span', { class: 'cell owned' }, 'T C'), ' target and current ',
      h('span', { class: 'cell pending' }, 'T'), ' target, not yet read ',
      h('span', { class: 'cell releasing' }, 'C'), ' read, no longer target ',
      h('span', { class: 'cell revoking' }, 'R'), ' being revoked ',
      h('span', { class: 'cell ended' }, 'ended'), ' last reported by a member whose lease ended (it reads nothing)'));
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
    h('h2', null, 'Consumption status'), statusInfo, shardStatus, statusLegend(), scaling,
    h('h2', null, 'Throughput'), positions.throughput,
    h('h2', null, 'Members'), members,
    h('h2', null, 'Assignment: target vs current'), grid,
    h('h2', null, 'Assignment history'), history.el,
    h('h2', null, 'Shard positions: lag and pending'), positions.el,
    h('div', { class: 'cols' }, h('div', null, h('h2', null, 'Revoke progress'), revokes),
      h('div', null, h('h2', null, 'Invariant violations'), violations)),
    h('h2', null, 'Migrations'), scale, migrations,
    h('h2', null, 'Recent audit events'), audit);
  return { el, refresh };
}
