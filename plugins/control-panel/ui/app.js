// @ts-check
/**
 * The control panel: the streams on the left, the chosen one's entries, an entry's form or
 * the stream's definition on the right, chosen by the URL's hash (`#/s/books`,
 * `#/s/books/e/1`, `#/s/books/new`, `#/s/books/definition`) so every screen has a link
 * and the browser's back button works.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { call, setToken, token } from './api.js';
import { DefinitionView } from './definition.js';
import { streamOf } from './fields.js';
import { EntryForm } from './form.js';
import { html } from './html.js';
import { Nav } from './nav.js';
import { SignIn } from './signin.js';
import { EntriesTable } from './table.js';

/** @typedef {import('./fields.js').Stream} Stream */
/** @typedef {{ stream: string | null, view: 'entries' | 'entry' | 'new' | 'definition', key: string | null }} Route */

/** @returns {Route} */
function routeOf(/** @type {string} */ hash) {
  const parts = hash.replace(/^#\/?/, '').split('/').map((p) => decodeURIComponent(p));
  if (parts[0] !== 's' || !parts[1]) return { stream: null, view: 'entries', key: null };
  if (parts[2] === 'e' && parts[3] !== undefined) return { stream: parts[1], view: 'entry', key: parts[3] };
  if (parts[2] === 'new') return { stream: parts[1], view: 'new', key: null };
  if (parts[2] === 'definition') return { stream: parts[1], view: 'definition', key: null };
  return { stream: parts[1], view: 'entries', key: null };
}

/** Every definition the caller may list, page after page. */
async function loadStreams() {
  /** @type {Stream[]} */
  const out = [];
  for (let page = 1; page <= 100; page++) {
    const answer = await call('GET', `/streams?per_page=100&page=${page}`);
    for (const raw of answer.data) out.push(streamOf(raw));
    if (page >= Number(answer.meta.last_page ?? 1)) break;
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

function App() {
  const [route, setRoute] = useState(routeOf(location.hash));
  const [streams, setStreams] = useState(/** @type {Stream[] | null} */ (null));
  const [unauthorized, setUnauthorized] = useState(/** @type {string | null} */ (null));
  const [error, setError] = useState('');
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    const onHash = () => setRoute(routeOf(location.hash));
    const onUnauthorized = (/** @type {Event} */ e) => setUnauthorized(String(/** @type {CustomEvent} */ (e).detail ?? ''));
    window.addEventListener('hashchange', onHash);
    window.addEventListener('panel:unauthorized', onUnauthorized);
    return () => {
      window.removeEventListener('hashchange', onHash);
      window.removeEventListener('panel:unauthorized', onUnauthorized);
    };
  }, []);

  useEffect(() => {
    loadStreams().then(
      (list) => {
        setStreams(list);
        setError('');
      },
      (e) => setError(e.status === 401 ? '' : e.message),
    );
  }, [generation]);

  const navigate = (/** @type {string} */ hash) => {
    location.hash = hash;
  };
  const current = streams?.find((s) => s.id === route.stream) ?? null;
  // No stream chosen: the first one.
  useEffect(() => {
    if (streams && streams.length > 0 && route.stream === null) history.replaceState(null, '', `#/s/${encodeURIComponent(streams[0].id)}`), setRoute(routeOf(location.hash));
  }, [streams, route.stream]);

  /** @type {any} */
  let main;
  if (unauthorized !== null) {
    main = html`<${SignIn} message=${unauthorized} onSignedIn=${() => (setUnauthorized(null), setGeneration((n) => n + 1))} />`;
  } else if (error) {
    main = html`<p role="alert" class="error">${error}</p>`;
  } else if (streams === null) {
    main = html`<p>Loading…</p>`;
  } else if (!current) {
    main = html`<p>${streams.length === 0 ? 'No streams yet.' : `No stream [${route.stream}].`}</p>`;
  } else {
    const base = `#/s/${encodeURIComponent(current.id)}`;
    main = html`<div>
      <nav class="tabs" aria-label=${`${current.name} views`}>
        <a href=${base} aria-current=${route.view === 'entries' ? 'page' : undefined}>Entries</a>
        <a href=${`${base}/definition`} aria-current=${route.view === 'definition' ? 'page' : undefined}>Definition</a>
      </nav>
      ${route.view === 'entries' && html`<${EntriesTable} key=${current.id} stream=${current} />`}
      ${route.view === 'entry' && html`<${EntryForm} key=${`${current.id}/${route.key}`} stream=${current} entryKey=${route.key} navigate=${navigate} />`}
      ${route.view === 'new' && html`<${EntryForm} key=${`${current.id}/new`} stream=${current} entryKey=${null} navigate=${navigate} />`}
      ${route.view === 'definition' && html`<${DefinitionView} stream=${current} onSaved=${() => setGeneration((n) => n + 1)} />`}
    </div>`;
  }
  return html`<div class="layout">
    <header>
      <h1>Streams</h1>
      ${token()
        ? html`<button type="button" class="secondary small" onClick=${() => (setToken(null), setGeneration((n) => n + 1))}>Sign out</button>`
        : unauthorized === null && html`<button type="button" class="secondary small" onClick=${() => setUnauthorized('Sign in with a token to see what it may see.')}>Sign in</button>`}
    </header>
    <aside>${streams && html`<${Nav} streams=${streams} current=${current?.id ?? null} />`}</aside>
    <main id="main">${main}</main>
  </div>`;
}

const root = document.getElementById('app');
if (root) render(html`<${App} />`, root);
