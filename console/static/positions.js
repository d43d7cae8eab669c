// positions.js: a group's shard positions on its group page, from
// /offsets: its throughput (produced and consumed per second, total lag,
// lag as time, pending, memory) with the lag trend of the last minutes
// (trend.js); per shard the length, lag, lag as time, pending, rates,
// memory and last delivered id; the offset reset (POST …/offsets/reset)
// behind a confirmation: live (followed until DONE or FAILED) or forced,
// with each shard's position before and after; and pausing or resuming
// shards, the paused ones read from the API at every refresh
// (docs/operations.md).

import { ApiError, get, groupPath, monPath, post, session } from './api.js';
import { age, bytes, count, errorBox, field, fill, h, indexes, rate, shardList, showError, table } from './dom.js';
import { lagTrend } from './trend.js';

const dash = (v) => (v === null || v === undefined ? '–' : v);

// positionsPanel returns el (the shard table and the reset form),
// throughput (the group's rates and lag trend) and refresh.
export function positionsPanel(p, g, onReset) {
  const offsets = h('div', { id: 'shard-offsets' });
  const stats = h('div', { id: 'throughput-stats' });
  const trend = lagTrend(p, g);
  const throughput = h('div', { id: 'throughput', class: 'card' }, stats, trend.el);
  const to = h('select', { name: 'resetTo' },
    ['LATEST', 'EARLIEST', 'ID', 'TIMESTAMP', 'BY'].map((v) => h('option', { value: v }, v)));
  const at = h('input', { name: 'resetAt', placeholder: 'entry id, Unix ms or ±N entries' });
  const shards = h('input', { name: 'resetShards', placeholder: 'all, or 0,2' });
  const force = h('input', { name: 'resetForce', type: 'checkbox' });
  const by = h('input', { name: 'resetRequestedBy', required: true, value: session()?.username ?? '' });
  const reason = h('input', { name: 'resetReason', value: 'via console' });
  const err = errorBox();
  const result = h('div', { id: 'reset-result' });
  const question = h('p', { id: 'reset-question' });
  const confirm = h('div', { id: 'reset-confirm', class: 'card danger', hidden: true }, question,
    h('div', { class: 'buttons' },
      h('button', { type: 'button', id: 'confirm-reset', class: 'danger', onclick: () => reset() }, 'Reset'),
      h('button', { type: 'button', onclick: () => { confirm.hidden = true; } }, 'Cancel')));

  // body builds the reset request from the form, or throws on bad input.
  function body() {
    const b = { to: to.value, requestedBy: by.value.trim(), reason: reason.value.trim(), force: force.checked };
    if (to.value === 'ID') b.entryId = at.value.trim();
    if (to.value === 'TIMESTAMP') b.timestampMs = Number(at.value.trim());
    if (to.value === 'BY') b.by = Number(at.value.trim());
    const list = shards.value.trim();
    if (list !== '' && list !== 'all') b.shards = list.split(',').map((s) => Number(s.trim()));
    return b;
  }

  const form = h('form', {
    id: 'reset-form', class: 'card inline',
    onsubmit: (e) => {
      e.preventDefault();
      showError(err, null);
      const b = body();
      question.textContent = `Reset ${p} / ${g} on ${b.shards ? 'shards ' + b.shards.join(', ') : 'every shard'} to ${b.to}` +
        `${b.entryId ? ' ' + b.entryId : ''}${b.timestampMs !== undefined ? ' ' + b.timestampMs : ''}` +
        `${b.by !== undefined ? ` ${b.by > 0 ? '+' : ''}${b.by} entries` : ''}` +
        `${b.force ? ', at once, racing the members that read them' : ', pausing them while it is set'}? Consumers then read from there.`;
      confirm.hidden = false;
    },
  }, h('h2', null, 'Reset offsets'), field('To', to), field('Entry id / time (ms) / N', at), field('Shards', shards),
  h('label', { class: 'check' }, force, 'force (set at once, racing the readers)'), field('Requested by', by), field('Reason', reason),
  h('button', { type: 'submit' }, 'Reset…'), err);

  async function reset() {
    confirm.hidden = true;
    try {
      let r = await post(groupPath(p, g) + '/offsets/reset', body());
      if (r.resetId) {
        r = await follow(r);
        showLive(r);
      } else {
        fill(result, h('p', { class: 'ok' }, `Reset to ${r.to}${r.forced ? ' (forced)' : ''}:`),
          table(['Shard', 'Before: last delivered', 'lag', 'After: last delivered', 'lag', 'pending', 'Held by'],
            r.shards.map((s) => h('tr', { 'data-reset-shard': s.shardIndex },
              h('td', null, s.shardIndex), h('td', { class: 'mono' }, dash(s.before.lastDeliveredId)), h('td', null, dash(s.before.lag)),
              h('td', { class: 'mono' }, dash(s.after.lastDeliveredId)), h('td', { class: 'lag-after' }, dash(s.after.lag)),
              h('td', null, dash(s.after.pending)), h('td', null, s.heldBy.join(', ') || '–')))));
      }
      await onReset();
    } catch (ex) {
      showError(err, ex);
    }
  }

  // follow reads live reset r until it is DONE or FAILED, showing its state.
  async function follow(r) {
    const path = monPath(p, g) + '/offsets/resets/' + encodeURIComponent(r.resetId);
    for (let i = 0; i < 600 && (r.state === 'PAUSING' || r.state === 'APPLYING'); i++) {
      fill(result, h('p', { id: 'reset-state' }, `Live reset ${r.resetId}: ${r.state}…`));
      await new Promise((done) => setTimeout(done, 300));
      r = await get(path);
    }
    return r;
  }

  function showLive(r) {
    const pos = (x) => x ?? {};
    fill(result, h('p', { id: 'reset-state', class: r.state === 'DONE' ? 'ok' : 'error' },
      `Live reset ${r.resetId} to ${r.target.to}: ${r.state}${r.error ? ' (' + r.error + ')' : ''}`),
    table(['Shard', 'Paused from', 'Before: last delivered', 'lag', 'pending', 'After: last delivered', 'lag', 'pending'],
      r.shards.map((s) => h('tr', { 'data-reset-shard': s.shardIndex },
        h('td', null, s.shardIndex), h('td', null, s.pausedFrom.join(', ') || '–'),
        h('td', { class: 'mono' }, dash(pos(s.before).lastDeliveredId)), h('td', null, dash(pos(s.before).lag)), h('td', null, dash(pos(s.before).pending)),
        h('td', { class: 'mono' }, dash(pos(s.after).lastDeliveredId)), h('td', { class: 'lag-after' }, dash(pos(s.after).lag)),
        h('td', null, dash(pos(s.after).pending))))));
  }

  // The pause form: shards paused are revoked from their readers and
  // granted to nobody until resumed.
  const pauseShards = h('input', { name: 'pauseShards', placeholder: '0,2' });
  const pauseErr = errorBox();
  const paused = h('p', { id: 'paused-shards' });
  // showPaused renders v, a PausedView (GET …/paused-shards or the answer
  // of a pause or resume).
  function showPaused(v) {
    const releasing = Object.entries(v.pausing ?? {}).map(([m, s]) => `${m} (${shardList(s)})`).join(', ');
    fill(paused, `Paused: ${v.pausedShards?.length ? shardList(v.pausedShards) : 'none'}` +
      `${v.resetShards?.length ? '; held by a live reset: ' + shardList(v.resetShards) : ''}${releasing ? '; still releasing: ' + releasing : ''}`);
  }
  async function pause(op) {
    showError(pauseErr, null);
    try {
      showPaused(await post(groupPath(p, g) + '/shards/' + op, {
        shards: pauseShards.value.split(',').map((s) => Number(s.trim())), requestedBy: by.value.trim(), reason: reason.value.trim(),
      }));
      await onReset();
    } catch (ex) {
      showError(pauseErr, ex);
    }
  }
  const pauseForm = h('form', { id: 'pause-form', class: 'card inline', onsubmit: (e) => { e.preventDefault(); pause('pause'); } },
    h('h2', null, 'Pause shards'), field('Shards', pauseShards),
    h('button', { type: 'submit' }, 'Pause'), h('button', { type: 'button', id: 'resume-shards', onclick: () => pause('resume') }, 'Resume'),
    paused, pauseErr);

  // refresh shows the throughput and the shard offsets, adds the total lag
  // to the trend and returns the offsets read; without Redis (503) it says
  // so (an unknown lag in the trend) and returns null.
  async function refresh() {
    let o;
    const held = get(monPath(p, g) + '/paused-shards');
    try {
      o = await get(monPath(p, g) + '/offsets');
    } catch (ex) {
      await held.then(showPaused, () => {});
      if (ex instanceof ApiError && ex.status === 503) {
        const msg = h('p', { class: 'empty' }, 'Shard offsets unavailable: ' + ex.message);
        fill(offsets, msg);
        fill(stats, msg.cloneNode(true));
        trend.add(null, null);
        return null;
      }
      throw ex;
    }
    const v = await held;
    showPaused(v);
    const stopped = new Set([...indexes(v.pausedShards), ...indexes(v.resetShards)]);
    trend.add(o.totalLag, o.totalStreamLength);
    fill(stats, h('dl', null,
      h('dt', null, 'Produced'), h('dd', { id: 'produced-rate' }, rate(o.producedPerSecond)),
      h('dt', null, 'Consumed'), h('dd', { id: 'consumed-rate' }, rate(o.consumedPerSecond)),
      h('dt', null, 'Total lag'), h('dd', { id: 'total-lag' }, count(o.totalLag)),
      h('dt', { title: 'age of the oldest entry not yet delivered to the group' }, 'Lag as time'),
      h('dd', { id: 'lag-age' }, age(o.oldestUnreadAgeSeconds)),
      h('dt', null, 'Pending'), h('dd', null, count(o.totalPendingCount)),
      h('dt', null, 'Memory'), h('dd', { id: 'memory-usage' }, bytes(o.totalMemoryUsageBytes), o.memoryUsageKnown ? '' : ' (known shards only)')));
    fill(offsets, table(['Shard', 'Stream key', 'Length', 'Lag', 'Lag as time', 'Pending', 'Produced', 'Consumed', 'Memory', 'Last delivered', 'Owners'],
      o.shards.map((s) => h('tr', { 'data-shard-offset': s.shard.shardIndex },
        h('td', null, s.shard.shardIndex), h('td', { class: 'mono' }, s.streamKey), h('td', null, s.streamLength),
        h('td', { class: 'lag' }, dash(s.lag)), h('td', { class: 'lag-age' }, age(s.oldestUnreadAgeSeconds)),
        h('td', { class: 'pending' }, s.pendingCount),
        h('td', { class: 'produced' }, rate(s.producedPerSecond)), h('td', { class: 'consumed' }, rate(s.consumedPerSecond)),
        h('td', null, bytes(s.memoryUsageBytes)),
        h('td', { class: 'mono' }, dash(s.groupLastDeliveredId)),
        h('td', { class: 'owners' }, stopped.has(s.shard.shardIndex)
          ? ['paused', s.ownerMemberIds.length ? ` (still read by ${s.ownerMemberIds.join(', ')})` : '']
          : s.ownerMemberIds.join(', ') || '–'))),
      'No shards.'),
    h('p', { class: 'legend' }, `Total lag ${dash(o.totalLag)}, pending ${o.totalPendingCount}. `,
      'Lag as time: how long the oldest entry not yet delivered has been in the stream. Rates compare the last two reads of each shard.'));
    return o;
  }

  const el = h('div', null, offsets,
    h('p', null, h('a', { href: '#/dead-letters/' + encodeURIComponent(p) + '/' + encodeURIComponent(g), id: 'dead-letters-link' }, 'Dead letters of this group →')),
    form, confirm, result, pauseForm);
  return { el, throughput, refresh };
}
