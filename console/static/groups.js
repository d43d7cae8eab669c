// groups.js: the groups overview (#15 with the lag and rates of the
// Grafana group rows), the create form (#4) and delete with confirmation
// (#6).

import { call, get, groupPath, post, session } from './api.js';
import { badge, errorBox, field, fill, h, rate, showError, table } from './dom.js';

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

  async function refresh() {
    const [list, rows] = await Promise.all([
      get('/monitoring/groups'),
      get('/monitoring/grafana/groups?streamPrefix=&consumerGroup=').catch(() => []),
    ]);
    const lag = new Map(rows.map((r) => [r.streamPrefix + '\u0000' + r.consumerGroup, r]));
    groups = list.groups;
    fill(body, table(
      ['Stream prefix', 'Group', 'State', 'Group / assignment epoch', 'Metadata', 'Shards', 'Members', 'Current / target', 'Migration', 'Lag', 'Produced / consumed', ''],
      groups.map((g) => {
        const r = lag.get(g.streamPrefix + '\u0000' + g.consumerGroup);
        const m = g.activeMigration;
        return h('tr', { 'data-group': g.streamPrefix + '/' + g.consumerGroup },
          h('td', null, g.streamPrefix),
          h('td', null, h('a', { href: groupLink(g.streamPrefix, g.consumerGroup) }, g.consumerGroup)),
          h('td', null, badge(g.state)),
          h('td', null, `${g.groupEpoch} / ${g.assignmentEpoch}`),
          h('td', null, g.metadataVersion),
          h('td', { class: 'shard-count' }, g.shardCount),
          h('td', { class: 'member-count' }, r ? `${r.activeMembers} live / ${r.totalMembers}` : Object.keys(g.targetAssignmentSummary).length),
          h('td', null, r ? `${r.currentShards} / ${r.targetShards}` : '–'),
          h('td', null, m ? [badge(m.state), ` ${m.fromShardCount} → ${m.toShardCount}`] : '–'),
          h('td', { class: 'lag' }, r?.totalLag ?? '–'),
          h('td', { class: 'rates' }, r ? `${rate(r.producedPerSecond)} / ${rate(r.consumedPerSecond)}` : '–'),
          h('td', null, h('button', { type: 'button', class: 'small danger', onclick: () => askDelete(g) }, 'Delete')));
      }), 'No groups yet: create one above.'));
  }

  const el = h('section', { id: 'groups-view' }, h('h1', null, 'Consumer groups'), create, confirm, body);
  return { el, refresh };
}
