// @ts-check
/**
 * One form control per field, from its type and its `input` hint: each labelled with the
 * field's name, its error tied to it (`aria-describedby`), values converted to what the API
 * takes (numbers, booleans, lists, JSON for arrays and objects).
 */
import { useEffect, useState } from 'preact/hooks';
import { call, query } from './api.js';
import { html } from './html.js';
import { MarkdownPreview } from './markdown.js';
import { optionsOf, streamOf } from './fields.js';

/** @typedef {import('./fields.js').Field} Field */
/** @typedef {{ field: Field, id: string, value: any, error?: string, onInput: (value: any) => void }} InputProps */

/** @param {InputProps} props */
export function FieldInput(props) {
  const { field, id, error } = props;
  const hint = hintOf(field);
  const describedBy = [error ? `${id}-error` : '', hint ? `${id}-hint` : ''].filter(Boolean).join(' ') || undefined;
  const control = controlOf(props, describedBy);
  // Outside the label, so a control's name is the field's name alone; `required` on the control tells assistive technology.
  const required = field.required ? html`<span class="required" aria-hidden="true">*</span>` : null;
  if (field.type === 'boolean') {
    return html`<div class="field field-checkbox">
      ${control}<label for=${id}>${field.name}</label>${required}
      ${hint && html`<p class="hint" id=${`${id}-hint`}>${hint}</p>`}
      ${error && html`<p class="field-error" id=${`${id}-error`}>${error}</p>`}
    </div>`;
  }
  return html`<div class="field">
    <div class="label-row"><label for=${id}>${field.name}</label>${required}</div>
    ${control}
    ${hint && html`<p class="hint" id=${`${id}-hint`}>${hint}</p>`}
    ${error && html`<p class="field-error" id=${`${id}-error`}>${error}</p>`}
  </div>`;
}

/** @param {Field} field */
function hintOf(field) {
  if (field.protected || field.type === 'hash') return 'Not shown: leave empty to keep the stored value.';
  if (field.type === 'datetime') return 'ISO 8601, e.g. 2024-05-01T10:30:00+02:00';
  return '';
}

/** @param {InputProps} props @param {string | undefined} describedBy */
function controlOf({ field, id, value, onInput, error }, describedBy) {
  const common = { id, name: field.handle, 'aria-describedby': describedBy, 'aria-invalid': error ? 'true' : undefined, required: field.required && field.type !== 'boolean' && !field.protected };
  const kind = field.input.type;
  const text = (/** @type {string} */ type) =>
    html`<input ...${common} type=${type} value=${value ?? ''} onInput=${(/** @type {any} */ e) => onInput(e.currentTarget.value === '' ? null : e.currentTarget.value)} />`;
  if (field.protected || field.type === 'hash') {
    return html`<input ...${common} required=${false} type="password" autocomplete="new-password" value=${value ?? ''} onInput=${(/** @type {any} */ e) => onInput(e.currentTarget.value === '' ? undefined : e.currentTarget.value)} />`;
  }
  if (kind === 'markdown') return html`<${MarkdownInput} common=${common} value=${value} onInput=${onInput} />`;
  if (kind === 'textarea' || kind === 'text') {
    return html`<textarea ...${common} rows="5" value=${value ?? ''} onInput=${(/** @type {any} */ e) => onInput(e.currentTarget.value === '' ? null : e.currentTarget.value)}></textarea>`;
  }
  switch (field.type) {
    case 'boolean':
      return html`<input ...${common} type="checkbox" checked=${value === true} onChange=${(/** @type {any} */ e) => onInput(e.currentTarget.checked)} />`;
    case 'integer':
    case 'number':
    case 'decimal':
      return html`<input ...${common} type="number" step=${field.type === 'integer' ? '1' : 'any'} value=${value ?? ''}
        onInput=${(/** @type {any} */ e) => onInput(e.currentTarget.value === '' ? null : Number(e.currentTarget.value))} />`;
    case 'select':
    case 'enum':
      return html`<select ...${common} value=${value === null || value === undefined ? '' : String(value)} onChange=${(/** @type {any} */ e) => onInput(e.currentTarget.value === '' ? null : e.currentTarget.value)}>
        <option value="">—</option>
        ${optionsOf(field).map(([v, label]) => html`<option value=${v}>${label}</option>`)}
      </select>`;
    case 'multiselect': {
      const chosen = new Set((Array.isArray(value) ? value : []).map(String));
      return html`<select ...${common} multiple size=${Math.min(6, Math.max(2, optionsOf(field).length))}
        onChange=${(/** @type {any} */ e) => onInput([...e.currentTarget.selectedOptions].map((/** @type {HTMLOptionElement} */ o) => o.value))}>
        ${optionsOf(field).map(([v, label]) => html`<option value=${v} selected=${chosen.has(v)}>${label}</option>`)}
      </select>`;
    }
    case 'date':
      return field.config.format ? text('text') : text('date');
    case 'time':
      return field.config.format ? text('text') : html`<input ...${common} type="time" step="1" value=${value ?? ''} onInput=${(/** @type {any} */ e) => onInput(e.currentTarget.value === '' ? null : e.currentTarget.value)} />`;
    case 'color':
      return text('color');
    case 'email':
      return text('email');
    case 'url':
      return text('url');
    case 'array':
    case 'object':
    case 'polymorphic':
    case 'encrypted':
      return html`<${JsonInput} common=${common} value=${value} onInput=${onInput} />`;
    case 'relationship':
      return html`<${RelationshipPicker} field=${field} common=${common} value=${value} onInput=${onInput} />`;
    default:
      return text('text');
  }
}

/** A textarea of JSON: the value changes only while the text parses; a parse error is shown beside it. @param {{ common: Record<string, any>, value: any, onInput: (v: any) => void }} props */
function JsonInput({ common, value, onInput }) {
  const [text, setText] = useState(value === undefined || value === null ? '' : JSON.stringify(value, null, 2));
  const [problem, setProblem] = useState('');
  return html`<div>
    <textarea ...${common} class="json" rows="4" spellcheck=${false} value=${text}
      onInput=${(/** @type {any} */ e) => {
        const next = e.currentTarget.value;
        setText(next);
        if (next.trim() === '') {
          setProblem('');
          onInput(null);
          return;
        }
        try {
          onInput(JSON.parse(next));
          setProblem('');
        } catch (error) {
          setProblem(`Not valid JSON: ${/** @type {Error} */ (error).message}`);
        }
      }}></textarea>
    ${problem && html`<p class="field-error">${problem}</p>`}
  </div>`;
}

/** A textarea with a preview of its Markdown. @param {{ common: Record<string, any>, value: any, onInput: (v: any) => void }} props */
function MarkdownInput({ common, value, onInput }) {
  const [preview, setPreview] = useState(false);
  return html`<div class="markdown-input">
    <button type="button" class="secondary small" aria-pressed=${preview ? 'true' : 'false'} onClick=${() => setPreview(!preview)}>Preview</button>
    ${preview
      ? html`<${MarkdownPreview} source=${String(value ?? '')} />`
      : html`<textarea ...${common} rows="8" value=${value ?? ''} onInput=${(/** @type {any} */ e) => onInput(e.currentTarget.value === '' ? null : e.currentTarget.value)}></textarea>`}
  </div>`;
}

/** @type {Map<string, Promise<import('./fields.js').Stream>>} */
const relatedStreams = new Map();

/** @param {string} id */
function relatedStream(id) {
  let found = relatedStreams.get(id);
  if (!found) {
    found = call('GET', `/streams/${encodeURIComponent(id)}`).then((a) => streamOf(a.data));
    relatedStreams.set(id, found);
    found.catch(() => relatedStreams.delete(id));
  }
  return found;
}

/**
 * A searchable picker of entries of the related stream: type to search its title field
 * (its first text field), choose with a click or Enter; `multiple` keeps a list.
 * @param {{ field: Field, common: Record<string, any>, value: any, onInput: (v: any) => void }} props
 */
function RelationshipPicker({ field, common, value, onInput }) {
  const related = String(field.config.related ?? '');
  const multiple = field.config.multiple === true;
  const [search, setSearch] = useState('');
  /** @type {[{ key: unknown, label: string }[], (v: { key: unknown, label: string }[]) => void]} */
  const [results, setResults] = useState(/** @type {{ key: unknown, label: string }[]} */ ([]));
  const [problem, setProblem] = useState('');
  // The matches show while the picker has the focus (or a search is typed), not all the time.
  const [open, setOpen] = useState(false);
  const chosen = multiple ? (Array.isArray(value) ? value : []) : value === null || value === undefined ? [] : [value];
  useEffect(() => {
    if (!open) return undefined;
    let live = true;
    const timer = setTimeout(async () => {
      try {
        const stream = await relatedStream(related);
        const keyName = String(field.config.key_name ?? stream.keyName);
        const title = stream.fields.find((f) => f.handle !== keyName && ['string', 'slug', 'email'].includes(f.type) && !f.protected);
        const params = /** @type {Record<string, string | number>} */ ({ per_page: 10 });
        if (search && title) Object.assign(params, { [`where[${title.handle}]`]: `%${search}%`, [`constraint[${title.handle}]`]: 'LIKE' });
        const answer = await call('GET', `/streams/${encodeURIComponent(related)}/entries${query(params)}`);
        if (live) setResults(answer.data.map((/** @type {any} */ e) => ({ key: e[keyName], label: title ? `${e[title.handle]} (${e[keyName]})` : String(e[keyName]) })));
        setProblem('');
      } catch (error) {
        if (live) setProblem(/** @type {Error} */ (error).message);
      }
    }, 200);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [search, related, open]);
  const pick = (/** @type {unknown} */ key) => {
    if (multiple) onInput(chosen.some((c) => String(c) === String(key)) ? chosen : [...chosen, key]);
    else {
      onInput(key);
      setOpen(false);
    }
  };
  const remove = (/** @type {unknown} */ key) => onInput(multiple ? chosen.filter((c) => String(c) !== String(key)) : null);
  return html`<div class="picker" onFocusIn=${() => setOpen(true)}
    onFocusOut=${(/** @type {FocusEvent} */ e) => !(/** @type {HTMLElement} */ (e.currentTarget).contains(/** @type {Node | null} */ (e.relatedTarget))) && setOpen(false)}
    onKeyDown=${(/** @type {KeyboardEvent} */ e) => e.key === 'Escape' && setOpen(false)}>
    ${chosen.length > 0 && html`<ul class="chips" aria-label=${`${field.name}: chosen`}>
      ${chosen.map((key) => html`<li>${String(key)} <button type="button" class="link" aria-label=${`Remove ${String(key)}`} onClick=${() => remove(key)}>×</button></li>`)}
    </ul>`}
    <input ...${common} required=${field.required && chosen.length === 0} type="search" autocomplete="off" placeholder=${`Search ${related}`} value=${search}
      onInput=${(/** @type {any} */ e) => setSearch(e.currentTarget.value)} />
    ${problem && html`<p class="field-error">${problem}</p>`}
    <ul class="results" role="listbox" aria-label=${`${field.name}: matches`} hidden=${!open}>
      ${results.map((r) => html`<li role="option" aria-selected=${chosen.some((c) => String(c) === String(r.key)) ? 'true' : 'false'} tabindex="0"
        onClick=${() => pick(r.key)} onKeyDown=${(/** @type {KeyboardEvent} */ e) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), pick(r.key))}>${r.label}</li>`)}
    </ul>
  </div>`;
}
