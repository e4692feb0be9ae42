// @ts-check
/**
 * A stream's definition: read as JSON, and edited as JSON by those the server lets change
 * definitions (a refusal is shown as the server words it); validation errors by JSON path.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, CONFIG, call, headers } from './api.js';
import { html } from './html.js';

/** @typedef {import('./fields.js').Stream} Stream */

/** @param {{ stream: Stream, onSaved: () => void }} props */
export function DefinitionView({ stream, onSaved }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState('');
  const [problems, setProblems] = useState(/** @type {{ path: string, message: string }[]} */ ([]));
  const [status, setStatus] = useState('');
  // Offered only to callers the server lets change definitions: its OpenAPI document, made per
  // caller, has the PUT of a definition only for them (the server checks again on save).
  // null until the document answered: the section says which (`data-may-edit`), so a reader of
  // the page (a test, an assistive script) can tell "not offered" from "not known yet".
  const [mayEdit, setMayEdit] = useState(/** @type {boolean | null} */ (null));
  useEffect(() => {
    let live = true;
    setMayEdit(null);
    fetch(`${CONFIG.api}/openapi.json`, { headers: headers(), cache: 'no-store' })
      .then((r) => (r.ok ? r.json() : null))
      .then((doc) => live && setMayEdit(Boolean(doc?.paths?.[`${CONFIG.api}/streams/{stream}`]?.put)))
      .catch(() => live && setMayEdit(false));
    return () => {
      live = false;
    };
  }, [stream.id]);
  // Another stream: start over. The same stream reloaded (after a save): keep the status shown.
  useEffect(() => {
    setEditing(false);
    setProblems([]);
    setStatus('');
  }, [stream.id]);
  useEffect(() => {
    if (!editing) setText(JSON.stringify(stream.raw, null, 2));
  }, [stream.raw]);
  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setStatus('');
    let body;
    try {
      body = JSON.parse(text);
    } catch (error) {
      setProblems([{ path: '', message: `Not valid JSON: ${/** @type {Error} */ (error).message}` }]);
      return;
    }
    try {
      await call('PUT', `/streams/${encodeURIComponent(stream.id)}`, { body });
      setProblems([]);
      setEditing(false);
      setStatus('Definition saved.');
      onSaved();
    } catch (error) {
      const errors = error instanceof ApiError ? error.answer.errors : [{ message: /** @type {Error} */ (error).message }];
      setProblems(errors.map((x) => ({ path: String(x.meta?.field ?? x.meta?.path ?? ''), message: x.message })));
    }
  };
  return html`<section aria-labelledby="definition-title" data-may-edit=${mayEdit === null ? 'pending' : String(mayEdit)}>
    <div class="toolbar">
      <h2 id="definition-title">${stream.name}: definition</h2>
      ${!editing && mayEdit && html`<button type="button" class="secondary" onClick=${() => setEditing(true)}>Edit definition</button>`}
    </div>
    ${status && html`<p role="status">${status}</p>`}
    ${problems.length > 0 && html`<div role="alert" class="error"><ul>${problems.map((p) => html`<li>${p.path && html`<code>${p.path}</code> `}${p.message}</li>`)}</ul></div>`}
    ${editing
      ? html`<form onSubmit=${save}>
          <label for="definition-json">Definition JSON</label>
          <textarea id="definition-json" class="json" rows="24" spellcheck=${false} value=${text} onInput=${(/** @type {any} */ e) => setText(e.currentTarget.value)}></textarea>
          <div class="actions">
            <button type="submit">Save definition</button>
            <button type="button" class="secondary" onClick=${() => (setEditing(false), setProblems([]), setText(JSON.stringify(stream.raw, null, 2)))}>Cancel</button>
          </div>
        </form>`
      : html`<pre class="json" tabindex="0" aria-label="Definition JSON">${JSON.stringify(stream.raw, null, 2)}</pre>`}
  </section>`;
}
