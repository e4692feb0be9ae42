// @ts-check
/**
 * A stream's entries: a table with the stream's columns, sorted by clicking a header
 * (ascending, descending, none), paged and counted by the server (a stream of a million
 * entries opens as fast as one of ten), filtered with the list endpoint's own `where` and
 * `constraint`, and following the stream's change feed: a row changed elsewhere is updated
 * in place, a row created or deleted reloads the page.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, follow, query } from './api.js';
import { cellText, columnsOf, operatorsOf } from './fields.js';
import { html } from './html.js';

/** @typedef {import('./fields.js').Stream} Stream */
/** @typedef {{ field: string, operator: string, value: string }} Filter */

const PER_PAGE = 25;
const VALUELESS = new Set(['NULL', 'NOT NULL']);

/** @param {{ stream: Stream }} props */
export function EntriesTable({ stream }) {
  const columns = columnsOf(stream);
  const [page, setPage] = useState(1);
  /** @type {[{ field: string, dir: 'asc' | 'desc' } | null, (s: { field: string, dir: 'asc' | 'desc' } | null) => void]} */
  const [sort, setSort] = useState(/** @type {{ field: string, dir: 'asc' | 'desc' } | null} */ (null));
  const [filters, setFilters] = useState(/** @type {Filter[]} */ ([]));
  const [rows, setRows] = useState(/** @type {any[]} */ ([]));
  const [meta, setMeta] = useState(/** @type {{ total?: number, last_page?: number }} */ ({}));
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(true);
  const [reload, setReload] = useState(0);
  const [live, setLive] = useState(false);
  const rowsRef = useRef(rows);
  rowsRef.current = rows;

  useEffect(() => {
    setPage(1);
    setSort(null);
    setFilters([]);
  }, [stream.id]);

  useEffect(() => {
    let live = true;
    /** @type {Record<string, string | number>} */
    const params = { page, per_page: PER_PAGE };
    if (sort) params[`orderBy[${sort.field}]`] = sort.dir;
    for (const f of filters) {
      if (!VALUELESS.has(f.operator)) params[`where[${f.field}]`] = f.value;
      if (f.operator !== '=') params[`constraint[${f.field}]`] = f.operator;
    }
    setLoading(true);
    call('GET', `/streams/${encodeURIComponent(stream.id)}/entries${query(params)}`).then(
      (answer) => {
        if (!live) return;
        setRows(answer.data);
        setMeta(answer.meta);
        setError('');
        setLoading(false);
      },
      (e) => {
        if (!live) return;
        setError(e.message);
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [stream.id, page, sort, filters, reload]);

  // Live: an update of a row on this page replaces it; anything else reloads the page (once per burst).
  useEffect(() => {
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const again = () => {
      clearTimeout(timer);
      timer = setTimeout(() => setReload((n) => n + 1), 150);
    };
    const stop = follow(stream.id, (change) => {
      const at = rowsRef.current.findIndex((r) => String(r[stream.keyName]) === String(change.id));
      if (change.event === 'updated' && at !== -1 && change.data && !change.data_omitted) {
        const next = [...rowsRef.current];
        next[at] = change.data;
        setRows(next);
      } else if (change.event !== 'updated' || at !== -1) {
        again();
      }
    }, setLive);
    return () => {
      clearTimeout(timer);
      stop();
    };
  }, [stream.id]);

  const toggleSort = (/** @type {string} */ field) => {
    setPage(1);
    if (!sort || sort.field !== field) setSort({ field, dir: 'asc' });
    else if (sort.dir === 'asc') setSort({ field, dir: 'desc' });
    else setSort(null);
  };
  const total = meta.total ?? rows.length;
  const lastPage = Math.max(1, meta.last_page ?? 1);
  const base = `#/s/${encodeURIComponent(stream.id)}`;
  return html`<section aria-labelledby="entries-title" data-live=${live ? 'on' : 'off'}>
    <div class="toolbar">
      <h2 id="entries-title">${stream.name}</h2>
      <a class="button" href=${`${base}/new`}>New entry</a>
    </div>
    <${FilterBar} stream=${stream} filters=${filters} onChange=${(/** @type {Filter[]} */ f) => (setPage(1), setFilters(f))} />
    ${error && html`<p role="alert" class="error">${error}</p>`}
    <p class="count" aria-live="polite">${loading ? 'Loading…' : `${total} ${total === 1 ? 'entry' : 'entries'}`}</p>
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">${stream.name} entries</caption>
        <thead>
          <tr>
            ${columns.map((c) => {
              const sorted = sort && sort.field === c.handle ? (sort.dir === 'asc' ? 'ascending' : 'descending') : undefined;
              return html`<th scope="col" aria-sort=${sorted ?? 'none'}>
                <button type="button" class="sort" onClick=${() => toggleSort(c.handle)}>${c.name}</button>
                <span class="sort-mark" aria-hidden="true">${sorted === 'ascending' ? '▲' : sorted === 'descending' ? '▼' : ''}</span>
              </th>`;
            })}
          </tr>
        </thead>
        <tbody>
          ${rows.map(
            (row) => html`<tr key=${String(row[stream.keyName])}>
              ${columns.map((c, i) =>
                i === 0
                  ? html`<td><a href=${`${base}/e/${encodeURIComponent(String(row[stream.keyName]))}`}>${cellText(row[c.handle]) || String(row[stream.keyName])}</a></td>`
                  : html`<td>${cellText(row[c.handle])}</td>`,
              )}
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled=${page <= 1} onClick=${() => setPage(page - 1)}>Previous</button>
      <span>Page ${page} of ${lastPage}</span>
      <button type="button" disabled=${page >= lastPage} onClick=${() => setPage(page + 1)}>Next</button>
    </nav>
  </section>`;
}

/** Conditions on fields, one per field, as the list endpoint takes them. @param {{ stream: Stream, filters: Filter[], onChange: (f: Filter[]) => void }} props */
function FilterBar({ stream, filters, onChange }) {
  const candidates = stream.fields.filter((f) => !f.protected && f.type !== 'hash' && f.type !== 'encrypted');
  const [field, setField] = useState(candidates[0]?.handle ?? '');
  const chosen = candidates.find((f) => f.handle === field) ?? candidates[0];
  const operators = chosen ? operatorsOf(chosen) : ['='];
  const [operator, setOperator] = useState(operators[0] ?? '=');
  const [value, setValue] = useState('');
  const op = operators.includes(operator) ? operator : operators[0] ?? '=';
  const add = (/** @type {Event} */ e) => {
    e.preventDefault();
    if (!chosen) return;
    onChange([...filters.filter((f) => f.field !== chosen.handle), { field: chosen.handle, operator: op, value: op === 'LIKE' || op === 'NOT LIKE' ? (value.includes('%') ? value : `%${value}%`) : value }]);
    setValue('');
  };
  return html`<form class="filters" aria-label="Filter" onSubmit=${add}>
    <label>Field <select value=${chosen?.handle} onChange=${(/** @type {any} */ e) => setField(e.currentTarget.value)}>
      ${candidates.map((f) => html`<option value=${f.handle}>${f.name}</option>`)}
    </select></label>
    <label>Operator <select value=${op} onChange=${(/** @type {any} */ e) => setOperator(e.currentTarget.value)}>
      ${operators.map((o) => html`<option value=${o}>${o}</option>`)}
    </select></label>
    ${!VALUELESS.has(op) && html`<label>Value <input value=${value} onInput=${(/** @type {any} */ e) => setValue(e.currentTarget.value)} /></label>`}
    <button type="submit">Add filter</button>
    ${filters.length > 0 &&
    html`<ul class="active-filters" aria-label="Active filters">
      ${filters.map(
        (f) => html`<li>${stream.fields.find((x) => x.handle === f.field)?.name ?? f.field} ${f.operator} ${VALUELESS.has(f.operator) ? '' : f.value}
          <button type="button" class="link" aria-label=${`Remove filter on ${f.field}`} onClick=${() => onChange(filters.filter((x) => x !== f))}>×</button></li>`,
      )}
    </ul>`}
  </form>`;
}
