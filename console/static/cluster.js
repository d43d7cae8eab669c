// cluster.js: the coordinator cluster (GET /cluster): the live
// coordinators with their registry lease and the groups each owns, every
// group's owner, ownership epoch and placement, and the handovers of the
// coordinator that answered. A coordinator without a cluster (404) says so.

import { ApiError, get } from './api.js';
import { fill, h, table, time } from './dom.js';

export function clusterView() {
  const info = h('p', { id: 'cluster-info', class: 'legend' });
  const coordinators = h('div', { id: 'cluster-coordinators' });
  const groups = h('div', { id: 'cluster-groups' });
  const handovers = h('div', { id: 'cluster-handovers' });

  async function refresh() {
    let v;
    try {
      v = await get('/cluster');
    } catch (ex) {
      if (!(ex instanceof ApiError) || ex.status !== 404) throw ex;
      info.textContent = 'This coordinator runs without a cluster.';
      for (const el of [coordinators, groups, handovers]) fill(el);
      return;
    }
    info.textContent = `Answered by ${v.self}; ${v.coordinators.length} live coordinator${v.coordinators.length === 1 ? '' : 's'}, ${v.groups.length} group${v.groups.length === 1 ? '' : 's'}.`;
    fill(coordinators, table(['Id', 'URL', 'Lease ends', 'Groups owned'],
      v.coordinators.map((c) => h('tr', { 'data-coordinator': c.id },
        h('td', { class: 'mono' }, c.id, c.id === v.self ? ' (this one)' : ''), h('td', { class: 'mono' }, c.url),
        h('td', null, time(c.leaseExpiresAt)), h('td', null, c.groupsOwned))),
      'No live coordinator.'));
    fill(groups, table(['Stream', 'Group', 'Owner', 'Ownership epoch', 'Placed on'],
      v.groups.map((g) => h('tr', { 'data-cluster-group': `${g.streamPrefix}/${g.consumerGroup}` },
        h('td', null, g.streamPrefix),
        h('td', null, h('a', { href: '#/group/' + encodeURIComponent(g.streamPrefix) + '/' + encodeURIComponent(g.consumerGroup) }, g.consumerGroup)),
        h('td', { class: 'mono' }, g.owner || '– (none)'), h('td', null, g.ownershipEpoch),
        h('td', { class: g.owner && g.owner !== g.placedOn ? 'mono error-text' : 'mono' }, g.placedOn || '–'))),
      'No groups.'));
    fill(handovers, table(['At', 'Stream', 'Group', 'From', 'To', 'Cause'],
      [...v.recentHandovers].reverse().map((x) => h('tr', null,
        h('td', null, time(x.at)), h('td', null, x.streamPrefix), h('td', null, x.consumerGroup),
        h('td', { class: 'mono' }, x.from), h('td', { class: 'mono' }, x.to || '–'), h('td', null, x.cause))),
      'No handovers by this coordinator.'));
  }

  const el = h('section', { id: 'cluster-view' },
    h('h1', null, 'Cluster'), info,
    h('h2', null, 'Coordinators'), coordinators,
    h('h2', null, 'Groups'), groups,
    h('h2', null, 'Recent handovers (newest first)'), handovers);
  return { el, refresh };
}
