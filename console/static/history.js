// history.js: a group's assignment history (GET …/history,
// docs/observability.md "Assignment history") as a timeline on its group
// page: why each shard's target owner changed, newest first. The moves of
// one decision (same time, group epoch and cause: a join that moves four
// shards) form one event; each move shows its shard and from → to
// ("nobody" for none), a work-rebalance the weights behind it. A handover
// between coordinators (a group-level entry, shard -1) shows
// "coordinator A → B". A shard filter asks the API for that shard's moves
// only (?shard=), which leaves the handovers out.

import { ApiError, get, groupPath, query } from './api.js';
import { fill, h, time } from './dom.js';

// CAUSES says what each cause means (contract.MoveCause).
const CAUSES = {
  join: 'a member joined or rejoined',
  leave: 'a member left',
  'lease-expired': "a member's lease ran out",
  fenced: 'a member was fenced (an invalid report or a rebalance timeout)',
  'work-rebalance': 'the work balancer moved the shard',
  pause: 'an operator paused shards',
  resume: 'an operator resumed shards',
  'live-reset': 'a live offset reset paused its shards or ended',
  scale: 'a resharding migration changed the shard count or moved on',
  handover: 'another coordinator took the group over',
};

// MAX_SHOWN bounds the moves drawn (the coordinator keeps
// coordination.history.max-entries per group, 128 by default).
const MAX_SHOWN = 500;
// ALL is the filter's value for every shard.
const ALL = 'all';

// HANDOVER is the cause of a group-level entry: the coordinators it left
// and joined instead of a shard's members.
const HANDOVER = 'handover';
const handoverItem = (e) => h('li', { 'data-cause': e.cause, class: 'handover' },
  'coordinator ', h('span', { class: 'coordinator' }, e.fromCoordinator), ' → ', h('span', { class: 'coordinator' }, e.toCoordinator));

const who = (m) => (m ? h('span', { class: 'member' }, m) : h('span', { class: 'nobody' }, 'nobody'));
const fixed = (v) => (Math.round(v * 100) / 100).toString();

// causeBadge renders a cause as text on its colour, its meaning as title.
export const causeBadge = (c) => h('span', { class: 'cause cause-' + c, title: CAUSES[c] ?? '' }, c);

// historyPanel returns el (the filter and the timeline), refresh() and
// shards(n), which offers a filter per shard of n.
export function historyPanel(p, g) {
  const shard = h('select', { name: 'historyShard', 'aria-label': 'shard', onchange: () => { last = ''; refresh().catch((ex) => { info.textContent = 'Assignment history unavailable: ' + ex.message; }); } },
    h('option', { value: ALL }, 'every shard'));
  const info = h('p', { id: 'history-info', class: 'legend' });
  const list = h('ol', { id: 'history', class: 'timeline' });
  let last = ''; // the answer drawn, redrawn only when it changes
  let asked = 0; // the newest request: an older answer is not drawn

  // shards keeps one option per shard of n (and the one chosen).
  function shards(n) {
    const chosen = shard.value;
    const want = Math.max(n, chosen === ALL ? 0 : Number(chosen) + 1);
    if (shard.options.length === want + 1) return;
    fill(shard, h('option', { value: ALL }, 'every shard'),
      Array.from({ length: want }, (_, i) => h('option', { value: String(i) }, 'shard ' + i)));
    shard.value = chosen;
  }

  async function refresh() {
    const n = ++asked;
    let v;
    try {
      v = await get(groupPath(p, g) + '/history' + query({ shard: shard.value === ALL ? null : shard.value }));
    } catch (ex) {
      if (!(ex instanceof ApiError) || ex.status === 401) throw ex;
      if (n !== asked) return;
      last = '';
      fill(list);
      info.textContent = 'Assignment history unavailable: ' + ex.message;
      return;
    }
    const text = JSON.stringify(v.entries);
    if (n !== asked || text === last) return;
    last = text;
    draw(v.entries);
  }

  function draw(entries) {
    const moves = entries.slice(-MAX_SHOWN).reverse();
    const events = [];
    for (const e of moves) {
      const top = events[events.length - 1];
      if (top && top.at === e.at && top.groupEpoch === e.groupEpoch && top.cause === e.cause) top.moves.push(e);
      else events.push({ at: e.at, groupEpoch: e.groupEpoch, cause: e.cause, moves: [e] });
    }
    const which = shard.value === ALL ? '' : ` of shard ${shard.value}`;
    info.textContent = entries.length
      ? `${entries.length} move${entries.length === 1 ? '' : 's'}${which} kept by the coordinator, newest first` +
        `${entries.length > MAX_SHOWN ? ` (the newest ${MAX_SHOWN} shown)` : ''}.`
      : `No moves${which} recorded.`;
    fill(list, events.map((ev) => h('li', { class: 'event', 'data-cause': ev.cause, 'data-epoch': ev.groupEpoch },
      h('div', { class: 'when' }, h('time', { datetime: ev.at }, time(ev.at)), ` · group epoch ${ev.groupEpoch} · `,
        causeBadge(ev.cause), ev.cause === HANDOVER ? null : ` · ${ev.moves.length} move${ev.moves.length === 1 ? '' : 's'}`),
      h('ul', { class: 'moves' }, ev.moves.map((m) => (m.cause === HANDOVER ? handoverItem(m) : h('li', { 'data-history-shard': m.shard, 'data-cause': m.cause },
        h('span', { class: 'shard' }, ':' + m.shard), ' ', who(m.fromMember), ' → ', who(m.toMember),
        m.weights ? h('span', { class: 'weights' },
          ` (shard weight ${fixed(m.weights.shardWeight)}/s; load ${fixed(m.weights.fromLoad)} → ${fixed(m.weights.toLoad)})`) : null)))))));
  }

  const el = h('div', { id: 'assignment-history' },
    h('div', { class: 'buttons' }, h('label', { class: 'check' }, h('span', null, 'Show'), shard)),
    info, list,
    h('p', { class: 'legend' }, 'Causes: ', Object.entries(CAUSES).map(([c, what], i) => [i ? '; ' : '', causeBadge(c), ' ', what]), '.'));
  return { el, refresh, shards };
}
