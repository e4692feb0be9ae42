// @ts-check
/**
 * Stream definitions as the panel reads them: fields in one shape whatever the definition
 * file used (a list of `{handle, type}`, or a map of handle to type or to settings), the
 * columns of the table (`ui.table.columns`, else the first fields), the form's sections
 * (`ui.form.sections`), and which filter operators fit which field type.
 */

/**
 * @typedef {{ handle: string, name: string, type: string, required: boolean, protected: boolean,
 *   config: Record<string, any>, input: Record<string, any>, rules: string[] }} Field
 * @typedef {{ id: string, name: string, description?: string, keyName: string, fields: Field[], ui: Record<string, any>, raw: Record<string, any> }} Stream
 */

/** @param {Record<string, any>} raw @returns {Stream} */
export function streamOf(raw) {
  /** @type {Field[]} */
  const fields = [];
  const source = raw.fields ?? [];
  const entries = Array.isArray(source)
    ? source.map((f) => (typeof f === 'string' ? [f, { type: 'string' }] : [f.handle, f]))
    : Object.entries(source).map(([handle, f]) => [handle, typeof f === 'string' ? { type: f } : f]);
  for (const [handle, f] of entries) {
    if (typeof handle !== 'string') continue;
    const rules = typeof f.rules === 'string' ? f.rules.split('|') : Array.isArray(f.rules) ? f.rules : [];
    fields.push({
      handle,
      name: typeof f.name === 'string' && f.name ? f.name : handle,
      type: typeof f.type === 'string' ? f.type : 'string',
      required: f.required === true || rules.includes('required'),
      protected: f.protected === true,
      config: f.config && typeof f.config === 'object' ? f.config : {},
      input: f.input && typeof f.input === 'object' ? f.input : {},
      rules,
    });
  }
  return {
    id: raw.id,
    name: typeof raw.name === 'string' && raw.name ? raw.name : raw.id,
    description: raw.description,
    keyName: raw.config?.key_name ?? 'id',
    fields,
    ui: raw.ui && typeof raw.ui === 'object' ? raw.ui : {},
    raw,
  };
}

/** The table's columns: `ui.table.columns` (handles), else the first six readable fields. @param {Stream} stream */
export function columnsOf(stream) {
  const wanted = stream.ui.table?.columns;
  const readable = stream.fields.filter((f) => !f.protected && f.type !== 'hash');
  if (Array.isArray(wanted)) {
    const picked = wanted.map((c) => readable.find((f) => f.handle === (typeof c === 'string' ? c : c?.field ?? c?.handle))).filter(Boolean);
    if (picked.length > 0) return /** @type {Field[]} */ (picked);
  }
  return readable.slice(0, 6);
}

/**
 * The form's sections: `ui.form.sections` as `[{ "title", "fields": [handles] }]` (fields no
 * section names come last, in a section of their own), else one section of every field.
 * @param {Stream} stream
 * @returns {{ title: string | null, fields: Field[] }[]}
 */
export function sectionsOf(stream) {
  const sections = stream.ui.form?.sections;
  if (!Array.isArray(sections) || sections.length === 0) return [{ title: null, fields: stream.fields }];
  const used = new Set();
  const out = sections.map((s, i) => {
    const handles = Array.isArray(s?.fields) ? s.fields : [];
    const fields = handles.map((/** @type {string} */ h) => stream.fields.find((f) => f.handle === h)).filter(Boolean);
    for (const f of fields) used.add(f.handle);
    return { title: String(s?.title ?? s?.label ?? s?.name ?? `Section ${i + 1}`), fields: /** @type {Field[]} */ (fields) };
  });
  const rest = stream.fields.filter((f) => !used.has(f.handle));
  if (rest.length > 0) out.push({ title: 'Other', fields: rest });
  return out;
}

const NUMERIC = new Set(['integer', 'number', 'decimal']);
const TEXT = new Set(['string', 'email', 'url', 'slug', 'uuid', 'color', 'date', 'datetime', 'time', 'image', 'file']);

/** The list endpoint's operators that make sense for a field type (the server checks them again). @param {Field} field */
export function operatorsOf(field) {
  if (NUMERIC.has(field.type)) return ['=', '!=', '<', '<=', '>', '>=', 'IN', 'BETWEEN', 'NULL', 'NOT NULL'];
  if (field.type === 'boolean') return ['=', '!=', 'NULL', 'NOT NULL'];
  if (field.type === 'select' || field.type === 'enum' || field.type === 'relationship') return ['=', '!=', 'IN', 'NOT IN', 'NULL', 'NOT NULL'];
  if (field.type === 'multiselect' || field.type === 'array') return ['CONTAINS', 'NULL', 'NOT NULL'];
  if (TEXT.has(field.type)) return ['=', '!=', 'LIKE', 'NOT LIKE', '<', '>', 'IN', 'NULL', 'NOT NULL'];
  return ['=', '!=', 'NULL', 'NOT NULL'];
}

/** A cell's text: short, one line, whatever the value. @param {unknown} value */
export function cellText(value) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'object') {
    const text = JSON.stringify(value);
    return text.length > 80 ? `${text.slice(0, 77)}…` : text;
  }
  const text = String(value);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}

/** The options of a select field as [value, label] pairs. @param {Field} field @returns {[string, string][]} */
export function optionsOf(field) {
  const options = field.config.options;
  if (Array.isArray(options)) return options.map((o) => (o && typeof o === 'object' ? [String(o.value ?? o.key), String(o.label ?? o.value ?? o.key)] : [String(o), String(o)]));
  if (options && typeof options === 'object') return Object.entries(options).map(([k, v]) => [k, String(v)]);
  return [];
}
