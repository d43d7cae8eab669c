// trend.js: a group's total lag over the last minutes. The coordinator
// keeps no history, so the page keeps it: every refresh of a group's
// offsets adds a sample to that group's ring, kept in this tab for as long
// as it is open (also while other pages are shown), and the trend draws
// the ring as a line, with the rates averaged over the ring (those of
// /offsets compare the last two reads only, so a consumer that reads in
// batches shows 0 between them).

import { age, count, fill, h, rate, svg } from './dom.js';

// WINDOW_MS is how far back the trend reaches; MAX_SAMPLES bounds a ring
// (a sample every 1.5 s fills 5 minutes with 200).
const WINDOW_MS = 5 * 60 * 1000;
const MAX_SAMPLES = 400;
// GAP_MS between two samples (the page was not shown) breaks the line.
const GAP_MS = 10 * 1000;
const WIDTH = 600;
const HEIGHT = 80;

// rings maps a group ("prefix\0group") to its samples {at (ms), lag and
// length (total lag and stream length, null when unknown)}, oldest first.
const rings = new Map();

// lagTrend returns the trend of group g of stream p: el, and add(lag,
// length) which records a sample taken now and redraws.
export function lagTrend(p, g) {
  const key = p + '\u0000' + g;
  if (!rings.has(key)) rings.set(key, []);
  const ring = rings.get(key);
  const chart = h('div', { class: 'trend-chart' });
  const legend = h('p', { id: 'lag-trend-legend', class: 'legend' });
  const el = h('div', { id: 'lag-trend', class: 'trend' }, chart, legend);

  function add(lag, length, at = Date.now()) {
    ring.push({ at, lag, length });
    while (ring.length > MAX_SAMPLES || (ring.length && ring[0].at < at - WINDOW_MS)) ring.shift();
    draw(at);
  }

  function draw(now) {
    const lags = ring.filter((s) => s.lag !== null).map((s) => s.lag);
    const max = Math.max(0, ...lags);
    // The time axis runs from the oldest sample kept to now.
    const since = ring[0].at;
    const x = (at) => (((at - since) / Math.max(now - since, 1)) * WIDTH).toFixed(1);
    const y = (lag) => (HEIGHT - 2 - (lag / Math.max(max, 1)) * (HEIGHT - 4)).toFixed(1);
    // Runs of known lags are drawn as lines; an unknown lag or a gap
    // breaks them.
    const runs = [[]];
    ring.forEach((s, i) => {
      if (s.lag === null || (i > 0 && s.at - ring[i - 1].at > GAP_MS)) runs.push([]);
      if (s.lag !== null) runs[runs.length - 1].push([x(s.at), y(s.lag)]);
    });
    fill(chart, svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': 'total lag over time' },
      svg('line', { class: 'axis', x1: 0, y1: HEIGHT - 1, x2: WIDTH, y2: HEIGHT - 1 }),
      runs.filter((r) => r.length).map((r) => (r.length === 1
        ? svg('circle', { cx: r[0][0], cy: r[0][1], r: 2 })
        : svg('polyline', { points: r.map((pt) => pt.join(',')).join(' ') })))));
    const last = ring[ring.length - 1];
    const span = age(Math.round((now - since) / 1000));
    legend.textContent = lags.length
      ? `Total lag over the last ${span} (${ring.length} samples kept by this page while it is open, up to 5 min): ` +
        `now ${count(last.lag)}, min ${count(Math.min(...lags))}, max ${count(max)}.${averages()}`
      : 'Total lag unknown so far.';
  }

  // averages renders the rates between the oldest and the newest sample
  // whose lag and length are known, as /offsets computes them between two
  // reads; "" while they are less than a second apart.
  function averages() {
    const known = ring.filter((s) => s.lag !== null && s.length !== null);
    if (known.length < 2) return '';
    const a = known[0], b = known[known.length - 1];
    const secs = (b.at - a.at) / 1000;
    if (secs < 1) return '';
    const grown = Math.max(b.length - a.length, 0);
    return ` Averages over these ${age(Math.round(secs))}: produced ${rate(grown / secs)}, ` +
      `consumed ${rate(Math.max(grown - (b.lag - a.lag), 0) / secs)}.`;
  }

  if (ring.length) draw(Date.now());
  return { el, add };
}
