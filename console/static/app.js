// app.js: the console's router (hash routes), session and polling loop.
// Each view is {el, refresh()}: el is mounted once, refresh() fetches
// and re-renders the live parts; it runs at once and then every POLL_MS.

import { ApiError, login, logout, session } from './api.js';
import { h, errorBox, field, showError } from './dom.js';
import { groupsView } from './groups.js';
import { groupView } from './group.js';
import { messagesView } from './messages.js';
import { deadLettersView } from './deadletters.js';
import { clusterView } from './cluster.js';

const POLL_MS = 1500;
const main = document.getElementById('view');
const banner = document.getElementById('error');
let generation = 0;
let loginNotice = '';

// routes maps the first hash segment to a view factory taking the others.
const routes = {
  groups: () => groupsView(),
  group: (p, g) => groupView(p, g),
  messages: (p, g, i) => messagesView(p, g, Number(i)),
  'dead-letters': (p, g) => deadLettersView(p, g),
  cluster: () => clusterView(),
};

function route() {
  const gen = ++generation;
  const [name, ...args] = location.hash.replace(/^#\/?/, '').split('?')[0].split('/').map(decodeURIComponent);
  const s = session();
  document.getElementById('nav').hidden = !s;
  document.getElementById('who').textContent = s ? s.username : '';
  showBanner(null);
  if (!s || name === 'login') {
    if (s) logout();
    mount(loginView());
    main.querySelector('input').focus();
    return;
  }
  const make = routes[name];
  if (!make) {
    location.hash = '#/groups';
    return;
  }
  const view = make(...args);
  mount(view.el);
  poll(view, gen);
}

function mount(el) {
  main.replaceChildren(el);
}

// poll refreshes view until the route changes; a failed refresh is shown
// in the banner until one succeeds, a 401 ends the session, and a 404 (the
// group or shard is gone) ends the polling until the page is loaded again.
async function poll(view, gen) {
  while (gen === generation) {
    try {
      await view.refresh();
      if (gen === generation) showBanner(null);
    } catch (err) {
      if (gen !== generation) return;
      if (err instanceof ApiError && err.status === 401) {
        loginNotice = 'Session expired or invalid: log in again.';
        logout();
        route();
        return;
      }
      if (err instanceof ApiError && err.status === 404) {
        showBanner(err, 'Not found, no longer refreshed (reload the page to try again): ');
        return;
      }
      showBanner(err);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

function showBanner(err, lead = 'Refresh failed: ') {
  banner.hidden = !err;
  banner.textContent = err ? lead + (err.message ?? err) : '';
}

function loginView() {
  const user = h('input', { name: 'username', autocomplete: 'username', required: true });
  const pass = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const err = errorBox();
  const notice = h('p', { class: 'notice', hidden: !loginNotice }, loginNotice);
  loginNotice = '';
  const form = h('form', {
    id: 'login-form', class: 'card narrow',
    onsubmit: async (e) => {
      e.preventDefault();
      try {
        await login(user.value.trim(), pass.value);
        pass.value = '';
        if (!location.hash || location.hash.startsWith('#/login')) location.hash = '#/groups';
        else route(); // stay on the page the session expired on
      } catch (ex) {
        showError(err, ex);
      }
    },
  }, h('h1', null, 'Log in'), notice, field('Username', user), field('Password', pass),
  h('button', { type: 'submit' }, 'Log in'), err);
  return form;
}

document.getElementById('logout').addEventListener('click', () => {
  logout();
  location.hash = '#/login';
});
window.addEventListener('hashchange', route);
route();
