// @ts-check
/**
 * One entry's form (or a new entry's): controls generated from the fields and laid out in
 * the stream's sections; Save sends only the fields changed (a PATCH with `If-Match`, so a
 * save never overwrites an edit made elsewhere meanwhile: a 412 offers to reload or review);
 * Delete asks first in a dialog; a 409 shows each rule's message next to its field; an edit
 * made elsewhere while the form is open is announced, never silently overwritten.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, follow } from './api.js';
import { sectionsOf } from './fields.js';
import { html } from './html.js';
import { FieldInput } from './inputs.js';

/** @typedef {import('./fields.js').Stream} Stream */

const same = (/** @type {unknown} */ a, /** @type {unknown} */ b) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** @param {{ stream: Stream, entryKey: string | null, navigate: (hash: string) => void }} props */
export function EntryForm({ stream, entryKey, navigate }) {
  const isNew = entryKey === null;
  const [original, setOriginal] = useState(/** @type {Record<string, any> | null} */ (isNew ? {} : null));
  const [values, setValues] = useState(/** @type {Record<string, any>} */ ({}));
  const [etag, setEtag] = useState(/** @type {string | null} */ (null));
  const [errors, setErrors] = useState(/** @type {Record<string, string>} */ ({}));
  const [alert, setAlert] = useState('');
  const [notice, setNotice] = useState('');
  const [conflict, setConflict] = useState(/** @type {{ server: Record<string, any>, etag: string | null } | null} */ (null));
  const [saving, setSaving] = useState(false);
  const [status, setStatus] = useState('');
  const [live, setLive] = useState(false);
  const dialog = useRef(/** @type {HTMLDialogElement | null} */ (null));
  const base = `#/s/${encodeURIComponent(stream.id)}`;
  const path = `/streams/${encodeURIComponent(stream.id)}/entries`;

  const load = async () => {
    if (isNew) return;
    try {
      const answer = await call('GET', `${path}/${encodeURIComponent(String(entryKey))}`);
      setOriginal(answer.data);
      setValues(answer.data);
      setEtag(answer.etag);
      setErrors({});
      setNotice('');
      setConflict(null);
    } catch (e) {
      setAlert(/** @type {Error} */ (e).message);
    }
  };
  useEffect(() => {
    setAlert('');
    setStatus('');
    if (isNew) {
      setOriginal({});
      setValues(defaultsOf(stream));
    } else void load();
  }, [stream.id, entryKey]);

  // Told when the entry changes elsewhere while it is open: said, never overwritten on save.
  useEffect(() => {
    if (isNew) return undefined;
    return follow(stream.id, (change) => {
      if (String(change.id) !== String(entryKey)) return;
      setNotice(change.event === 'deleted' ? 'This entry was deleted elsewhere.' : 'This entry was changed elsewhere since you opened it.');
    }, setLive);
  }, [stream.id, entryKey]);

  const changed = () => {
    /** @type {Record<string, any>} */
    const out = {};
    for (const field of stream.fields) {
      const value = values[field.handle];
      if (value === undefined) continue;
      if (isNew || !same(value, original?.[field.handle])) out[field.handle] = value;
    }
    return out;
  };

  /** @param {Event} [e] @param {string | null} [ifMatch] */
  const save = async (e, ifMatch = etag) => {
    e?.preventDefault();
    setSaving(true);
    setAlert('');
    setStatus('');
    try {
      const body = changed();
      if (isNew) {
        const answer = await call('POST', path, { body });
        const key = answer.data?.[stream.keyName];
        navigate(`${base}/e/${encodeURIComponent(String(key))}`);
        return;
      }
      if (Object.keys(body).length === 0) {
        setStatus('Nothing to save: no field was changed.');
        return;
      }
      const answer = await call('PATCH', `${path}/${encodeURIComponent(String(entryKey))}`, { body, headers: ifMatch ? { 'if-match': ifMatch } : {} });
      setOriginal(answer.data);
      setValues(answer.data);
      setEtag(answer.etag ?? (await call('GET', `${path}/${encodeURIComponent(String(entryKey))}`)).etag);
      setErrors({});
      setNotice('');
      setConflict(null);
      setStatus('Saved.');
    } catch (error) {
      failed(error);
    } finally {
      setSaving(false);
    }
  };

  const failed = async (/** @type {unknown} */ error) => {
    if (!(error instanceof ApiError)) return setAlert(/** @type {Error} */ (error).message);
    if (error.status === 409) {
      /** @type {Record<string, string>} */
      const byField = {};
      for (const element of error.answer.errors) {
        const field = String(element.meta?.field ?? '');
        if (field && !byField[field]) byField[field] = element.message;
      }
      setErrors(byField);
      setAlert(error.answer.errors.map((x) => x.message).join(' '));
      return;
    }
    if (error.status === 412) {
      const fresh = await call('GET', `${path}/${encodeURIComponent(String(entryKey))}`).catch(() => null);
      setConflict(fresh ? { server: fresh.data, etag: fresh.etag } : null);
      setAlert('This entry changed since you opened it: nothing was saved. Reload it, or review the differences and save again.');
      return;
    }
    setAlert(error.message);
  };

  const remove = async () => {
    dialog.current?.close();
    try {
      await call('DELETE', `${path}/${encodeURIComponent(String(entryKey))}`, { headers: etag ? { 'if-match': etag } : {} });
      navigate(base);
    } catch (error) {
      failed(error);
    }
  };

  if (original === null) return html`<section><p>${alert ? '' : 'Loading…'}</p>${alert && html`<p role="alert" class="error">${alert}</p>`}</section>`;
  const title = isNew ? `New ${stream.name} entry` : `${stream.name}: ${String(entryKey)}`;
  const differences = conflict ? stream.fields.filter((f) => !same(conflict.server[f.handle], values[f.handle])) : [];
  return html`<section aria-labelledby="form-title" data-live=${live ? 'on' : 'off'}>
    <div class="toolbar">
      <h2 id="form-title">${title}</h2>
      <a href=${base}>Back to ${stream.name}</a>
    </div>
    ${notice && html`<p class="notice" role="status">${notice} <button type="button" class="secondary small" onClick=${load}>Reload</button></p>`}
    ${alert && html`<div role="alert" class="error">
      <p>${alert}</p>
      ${conflict && html`<p>
        <button type="button" class="secondary" onClick=${load}>Reload</button>
        <button type="button" class="secondary" onClick=${() => save(undefined, conflict.etag)}>Save mine over it</button>
      </p>
      ${differences.length > 0 && html`<ul class="differences" aria-label="Differences">
        ${differences.map((f) => html`<li><strong>${f.name}</strong>: now ${JSON.stringify(conflict.server[f.handle] ?? null)}, yours ${JSON.stringify(values[f.handle] ?? null)}</li>`)}
      </ul>`}`}
    </div>`}
    <form onSubmit=${save} novalidate>
      ${sectionsOf(stream).map((section) => {
        const controls = section.fields.map((field) =>
          html`<${FieldInput} key=${field.handle} field=${field} id=${`field-${field.handle}`} value=${values[field.handle]} error=${errors[field.handle] ?? errors[`/${field.handle}`]}
            onInput=${(/** @type {any} */ v) => setValues((current) => ({ ...current, [field.handle]: v }))} />`,
        );
        return section.title === null ? controls : html`<fieldset><legend>${section.title}</legend>${controls}</fieldset>`;
      })}
      <div class="actions">
        <button type="submit" disabled=${saving}>Save</button>
        ${!isNew && html`<button type="button" class="danger" onClick=${() => dialog.current?.showModal()}>Delete</button>`}
        ${status && html`<span role="status">${status}</span>`}
      </div>
    </form>
    <dialog ref=${dialog} aria-labelledby="delete-title">
      <h3 id="delete-title">Delete this entry?</h3>
      <p>${stream.name} ${String(entryKey)} will be deleted. This cannot be undone.</p>
      <div class="actions">
        <button type="button" class="danger" onClick=${remove}>Delete</button>
        <button type="button" class="secondary" onClick=${() => dialog.current?.close()}>Cancel</button>
      </div>
    </dialog>
  </section>`;
}

/** A new entry starts from the fields' plain defaults (the server fills in generated ones). @param {Stream} stream */
function defaultsOf(stream) {
  /** @type {Record<string, any>} */
  const values = {};
  for (const field of stream.fields) {
    const d = field.config.default;
    if (d === undefined || d === 'increment' || d === 'now' || d === 'today' || d === true && field.type === 'uuid') continue;
    values[field.handle] = d;
  }
  return values;
}
