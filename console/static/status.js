// status.js: the consumption status of groups and shards (GET
// …/status, the status of the group views; docs/observability.md,
// "Consumption status"), rendered as a coloured badge that always carries
// the status's name, so that colour is never the only cue.

import { h } from './dom.js';

// STATUSES are the statuses a shard can have, least severe first (as the
// API orders them), with what each means.
export const STATUSES = [
  ['OK', 'consumption keeps up'],
  ['PAUSED', 'no member may read it: paused by an operator or held by a live offset reset'],
  ['LAGGING', 'the lag grew over the window'],
  ['REWOUND', "the group's position moved back outside a live reset"],
  ['STALLED', 'a member holds it, entries wait or arrive, and the position does not move'],
  ['STOPPED', 'entries wait or arrive and no live member holds it'],
];

const UNKNOWN = 'UNKNOWN';
const meaning = new Map([...STATUSES,
  [UNKNOWN, 'not evaluated: no lag-refresh round yet on the coordinator that answers, no Redis, or the group is placed on another coordinator']]);

// severity ranks a status as the API does: UNKNOWN (or none) 0, then
// STATUSES in order.
export function severity(s) {
  const i = STATUSES.findIndex(([name]) => name === s);
  return i + 1;
}

// statusBadge renders status s (UNKNOWN when absent) as a badge whose
// title says what it means.
export function statusBadge(s) {
  const name = s || UNKNOWN;
  return h('span', { class: 'status status-' + name.toLowerCase(), title: meaning.get(name) ?? '' }, name);
}

// statusLegend lists the six statuses with their meaning.
export function statusLegend() {
  return h('p', { class: 'legend status-legend' }, 'Status, from the least to the most severe: ',
    STATUSES.map(([name, what], i) => [i ? '; ' : '', statusBadge(name), ' ', what]), '.');
}

// statusCounts renders counts ({status: n}) of the statuses that occur,
// most severe first: "1 STOPPED, 3 OK", "–" when all are 0.
export function statusCounts(counts) {
  const parts = [...STATUSES].reverse().filter(([name]) => counts[name] > 0)
    .map(([name]) => h('span', { class: 'status-count', 'data-status': name }, `${counts[name]} `, statusBadge(name)));
  if (counts[UNKNOWN] > 0) parts.push(h('span', { class: 'status-count', 'data-status': UNKNOWN }, `${counts[UNKNOWN]} `, statusBadge(UNKNOWN)));
  return parts.length ? parts.map((p, i) => [i ? ', ' : '', p]) : '–';
}
