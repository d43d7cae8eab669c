// dom.js: small helpers to build elements (text is always set as text,
// never parsed as HTML) and to format values.

// h builds an element: attributes (on* are listeners, class, value,
// checked, hidden set as properties) and children (strings, nodes, arrays;
// null and false are skipped).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value' || k === 'checked' || k === 'hidden' || k === 'disabled') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  el.append(...nodes(children));
  return el;
}

function nodes(children) {
  return children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false)
    .map((c) => (c instanceof Node ? c : document.createTextNode(String(c))));
}

// svg builds an SVG element: attributes are set as attributes, children
// as in h.
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs ?? {})) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  el.append(...nodes(children));
  return el;
}

// fill replaces el's children.
export function fill(el, ...children) { el.replaceChildren(...nodes(children)); }

// indexes turns a ShardSet [{shardIndex}] into [n].
export const indexes = (set) => (set ?? []).map((s) => s.shardIndex);

// shardList renders a shard set as "0, 1, 5" or "–".
export const shardList = (set) => (set?.length ? indexes(set).join(', ') : '–');

// time renders an instant as local time with seconds, "–" when null.
export function time(iso) {
  if (!iso) return '–';
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toLocaleString(undefined, { hour12: false });
}

// seconds renders ms as "4.2 s".
export const seconds = (ms) => (ms / 1000).toFixed(1) + ' s';

// age renders a duration in seconds in its two largest units ("45 s",
// "3 min 20 s", "2 h 5 min", "3 d 4 h"), "–" when null.
export function age(s) {
  if (s === null || s === undefined) return '–';
  if (s < 60) return (s < 10 ? s.toFixed(1) : Math.floor(s)) + ' s';
  const units = [['d', 86400], ['h', 3600], ['min', 60], ['s', 1]];
  const i = units.findIndex(([, n]) => s >= n);
  const [big, bn] = units[i], [small, sn] = units[i + 1];
  return `${Math.floor(s / bn)} ${big} ${Math.floor((s % bn) / sn)} ${small}`;
}

// rate renders entries per second ("12.5/s"), "–" when null.
export const rate = (v) => (v === null || v === undefined ? '–' : `${v < 10 ? v.toFixed(2) : v.toFixed(1)}/s`);

// bytes renders a size in binary units ("1.5 MiB"), "–" when null.
export function bytes(n) {
  if (n === null || n === undefined) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  for (; n >= 1024 && i < units.length - 1; i++) n /= 1024;
  return (i === 0 ? n : n.toFixed(1)) + ' ' + units[i];
}

// count renders an integer with thousands separators, "–" when null.
export const count = (n) => (n === null || n === undefined ? '–' : n.toLocaleString('en-US'));

// badge renders an enum value with a class of its own (style.css).
export const badge = (v) => h('span', { class: 'badge badge-' + String(v).toLowerCase() }, v);

// table builds a table from header labels and rows of cells.
export function table(headers, rows, empty = 'none') {
  return h('table', null,
    h('thead', null, h('tr', null, headers.map((x) => h('th', null, x)))),
    h('tbody', null, rows.length ? rows : h('tr', null, h('td', { colspan: headers.length, class: 'empty' }, empty))));
}

// field is a labelled input.
export const field = (label, input) => h('label', null, h('span', null, label), input);

// errorBox is the element where a form shows the error of its last call.
export const errorBox = () => h('div', { class: 'error form-error', role: 'alert', hidden: true });

// showError shows err (an ApiError) in box, or hides box when err is null.
export function showError(box, err) {
  box.hidden = !err;
  box.textContent = err ? err.message : '';
}
