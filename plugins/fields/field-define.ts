import type { FieldDefinition } from '../streams/index.js';

const KNOWN = new Set(['handle', 'type', 'required', 'unique', 'protected', 'rules', 'config']);

function splitRules(rules: unknown): string[] {
  if (rules === undefined || rules === null) return [];
  const list = Array.isArray(rules) ? rules.map(String) : String(rules).split('|');
  return list.map((r) => r.trim()).filter((r) => r.length > 0);
}

/**
 * A field-like definition (`"integer"`, or `{type, required, rules, config}` as in
 * array `items` and object `properties`) normalized the way the streams plugin
 * normalizes top-level fields. Undefined when it is neither a string nor an object.
 */
export function defineField(raw: unknown, handle: string): FieldDefinition | undefined {
  if (typeof raw === 'string') {
    return { handle, type: raw, required: false, unique: false, protected: false, rules: [], config: {} };
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const body = raw as Record<string, unknown>;
  const field: FieldDefinition = {
    handle: typeof body.handle === 'string' ? body.handle : handle,
    type: typeof body.type === 'string' ? body.type : 'string',
    required: body.required === true,
    unique: body.unique === true,
    protected: body.protected === true,
    rules: splitRules(body.rules),
    config: body.config && typeof body.config === 'object' && !Array.isArray(body.config) ? { ...(body.config as Record<string, unknown>) } : {},
  };
  for (const [key, v] of Object.entries(body)) if (!KNOWN.has(key)) field[key] = v;
  return field;
}

/**
 * The list-or-object forms of `items`/`properties`/inline `fields` as field
 * definitions; a list entry without a handle is named by its position.
 */
export function defineFields(raw: unknown): Array<{ handle: string; raw: unknown; field: FieldDefinition | undefined }> {
  if (Array.isArray(raw)) {
    return raw.map((item, index) => {
      const handle = item && typeof item === 'object' && typeof (item as { handle?: unknown }).handle === 'string'
        ? (item as { handle: string }).handle
        : String(index);
      return { handle, raw: item, field: defineField(item, handle) };
    });
  }
  if (raw && typeof raw === 'object') {
    return Object.entries(raw as Record<string, unknown>).map(([handle, item]) => ({ handle, raw: item, field: defineField(item, handle) }));
  }
  return [];
}

/** Laravel's `required` is implied by the field flag or the rule. */
export function isRequired(field: FieldDefinition, extraRules: string[] = []): boolean {
  return field.required || field.rules.includes('required') || extraRules.includes('required');
}
