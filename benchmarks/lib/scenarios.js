// The scenarios: what each server is asked, as wrk request templates ("{n}" rotates).
// The product and its replay ceiling get the same URLs; json-server (the peer) gets the
// URLs a json-server user would write for the same question.
import { CATEGORIES, STREAM_ID } from './dataset.js';

const API = `/api/streams/${STREAM_ID}`;
export const FILTERED_QUERY = 'where[category]=books&orderBy[year]=desc&per_page=20';
export const QUERY_BODY = JSON.stringify({ parameters: [{ where: ['year', '>', 1990] }, { orderBy: ['year', 'desc'] }] });

/** Keys rotated by the single-entry scenarios: up to 1000, spread over the whole range. */
function keySample(count) {
  const n = Math.min(count, 1000);
  return { count: n, start: 1, step: Math.max(1, Math.floor(count / n)) };
}

/**
 * Scenario list for a dataset of `count` entries. `ceiling` is 'replay' (bare uWS serving the
 * product's captured bytes) or 'durable' (bare uWS doing the durable write); `peer` is the
 * json-server request, or null when json-server has no equivalent.
 */
export function scenarios(count) {
  const keys = keySample(count);
  const pages = Math.max(1, Math.min(100, Math.floor(count / 20)));
  const filteredPages = Math.max(1, Math.min(10, Math.ceil(count / CATEGORIES.length / 20)));
  return [
    {
      id: 'get-one',
      label: 'GET one entry',
      product: { method: 'GET', path: `${API}/entries/{n}`, ...keys },
      ceiling: 'replay',
      peer: { method: 'GET', path: `/${STREAM_ID}/{n}`, ...keys },
    },
    {
      id: 'list',
      label: 'GET list page (20, unfiltered)',
      product: { method: 'GET', path: `${API}/entries?per_page=20&page={n}`, count: pages, start: 1, step: 1 },
      ceiling: 'replay',
      peer: { method: 'GET', path: `/${STREAM_ID}?_page={n}&_limit=20`, count: pages, start: 1, step: 1 },
    },
    {
      id: 'filtered',
      label: 'GET list filtered + sorted (category=books, year desc, 20)',
      product: { method: 'GET', path: `${API}/entries?${FILTERED_QUERY}&page={n}`, count: filteredPages, start: 1, step: 1 },
      ceiling: 'replay',
      peer: { method: 'GET', path: `/${STREAM_ID}?category=books&_sort=year&_order=desc&_page={n}&_limit=20`, count: filteredPages, start: 1, step: 1 },
    },
    {
      id: 'query',
      label: 'POST query (year > 1990, year desc, 20)',
      product: { method: 'POST', path: `${API}/query?per_page=20`, body: QUERY_BODY, count: 1, start: 1, step: 1 },
      ceiling: 'replay',
      peer: null,
    },
    {
      id: 'patch',
      label: 'PATCH one field (durable)',
      product: { method: 'PATCH', path: `${API}/entries/{n}`, body: '{"price":{n}.25}', ...keys },
      ceiling: 'durable',
      peer: null,
    },
    {
      id: 'create',
      label: 'POST create (durable)',
      product: {
        method: 'POST',
        path: `${API}/entries`,
        body: '{"title":"bench item {n}","category":"music","year":2001,"price":{n}.5,"available":true}',
        count: 1000,
        start: 1,
        step: 1,
      },
      ceiling: 'durable',
      peer: null,
    },
  ];
}

/** Every concrete request a template expands to (for capturing the product's answers). */
export function expand(template) {
  const out = [];
  for (let k = 0; k < (template.count ?? 1); k++) {
    const v = String((template.start ?? 1) + k * (template.step ?? 1));
    out.push({ method: template.method, path: template.path.replaceAll('{n}', v), body: template.body ? template.body.replaceAll('{n}', v) : null });
  }
  return out;
}
