// @ts-check
/** The streams, by name, each with its number of entries (counted by the server, a few at a time). */
import { useEffect, useState } from 'preact/hooks';
import { call } from './api.js';
import { html } from './html.js';

/** @typedef {import('./fields.js').Stream} Stream */

/** @param {{ streams: Stream[], current: string | null }} props */
export function Nav({ streams, current }) {
  const [counts, setCounts] = useState(/** @type {Record<string, number>} */ ({}));
  useEffect(() => {
    let live = true;
    const queue = [...streams];
    const worker = async () => {
      for (let s = queue.shift(); s && live; s = queue.shift()) {
        const id = s.id;
        try {
          const answer = await call('GET', `/streams/${encodeURIComponent(id)}/entries?per_page=1`);
          if (live) setCounts((c) => ({ ...c, [id]: Number(answer.meta.total ?? 0) }));
        } catch {
          /* a stream this caller may not list shows no count */
        }
      }
    };
    void Promise.all([worker(), worker(), worker(), worker()]);
    return () => {
      live = false;
    };
  }, [streams]);
  return html`<nav class="streams" aria-label="Streams">
    <ul>
      ${streams.map(
        (s) => html`<li key=${s.id}>
          <a href=${`#/s/${encodeURIComponent(s.id)}`} aria-current=${current === s.id ? 'page' : undefined}>${s.name}</a>
          ${counts[s.id] !== undefined && html`<span class="badge" aria-label=${`${counts[s.id]} entries`}>${counts[s.id]}</span>`}
        </li>`,
      )}
    </ul>
  </nav>`;
}
