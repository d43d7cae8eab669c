// api.js: calls of the coordinator's public API (docs/protocol.md §2) with the
// Bearer token of the session.

const basePath = document.querySelector('meta[name="coord-base-path"]').content;
const TOKEN = 'coord.token';
const USER = 'coord.user';
const EXPIRES = 'coord.expiresAt';

// ApiError is a failed call: the HTTP status and the error body
// {status, errorCode, message} when the answer had one.
export class ApiError extends Error {
  constructor(status, body, text) {
    const code = body?.errorCode ?? (status === 0 ? 'NETWORK_ERROR' : 'HTTP_' + status);
    const msg = body?.message ?? text ?? '';
    super(`HTTP ${status} ${code}${msg ? ': ' + msg : ''}`);
    this.status = status;
    this.errorCode = code;
    this.body = body;
  }
}

// session returns {username, token} while a token is held and not expired.
export function session() {
  const token = sessionStorage.getItem(TOKEN);
  const expires = Date.parse(sessionStorage.getItem(EXPIRES) ?? '');
  if (!token || (expires && expires <= Date.now())) return null;
  return { username: sessionStorage.getItem(USER) ?? '', token };
}

export function logout() {
  for (const k of [TOKEN, USER, EXPIRES]) sessionStorage.removeItem(k);
}

// call sends one request; body, when given, is sent as JSON. It returns
// the decoded answer or throws an ApiError.
export async function call(method, path, body) {
  const headers = { Accept: 'application/json' };
  const s = session();
  if (s) headers.Authorization = 'Bearer ' + s.token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(basePath + path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store', credentials: 'omit',
    });
  } catch (e) {
    throw new ApiError(0, null, String(e.message ?? e));
  }
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!res.ok) throw new ApiError(res.status, data, data ? null : text);
  return data;
}

export const get = (path) => call('GET', path);
export const post = (path, body) => call('POST', path, body);

// login exchanges a username and password for a token (#1) and keeps it.
export async function login(username, password) {
  logout();
  const t = await post('/auth/login', { username, password });
  sessionStorage.setItem(TOKEN, t.accessToken);
  sessionStorage.setItem(USER, username);
  sessionStorage.setItem(EXPIRES, t.expiresAt);
  return t;
}

const seg = encodeURIComponent;

// groupPath is /streams/{P}/groups/{G}; monPath its /monitoring twin.
export const groupPath = (p, g) => `/streams/${seg(p)}/groups/${seg(g)}`;
export const monPath = (p, g) => '/monitoring' + groupPath(p, g);

// query builds "?a=1&b=2" from the non-empty values of params.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? '?' + s : '';
}
