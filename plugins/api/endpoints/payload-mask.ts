import type { StreamDefinition } from '../../streams/index.js';

/** What a secret value is echoed as in `meta.payload`. */
export const MASKED = '********';
const SECRET_TYPES = new Set(['hash', 'encrypted']);

/**
 * The request payload as echoed in `meta.payload`: values of protected, `hash` and
 * `encrypted` fields are masked (a password must never come back in an answer, not even
 * in an error's). Top-level fields only: that is where such fields are declared.
 */
export function maskedPayload(definition: StreamDefinition | undefined, payload: Record<string, unknown>): Record<string, unknown> {
  if (definition === undefined) return payload;
  let out: Record<string, unknown> | undefined;
  for (const field of definition.fields) {
    if (field.protected !== true && !SECRET_TYPES.has(field.type)) continue;
    if (!Object.prototype.hasOwnProperty.call(payload, field.handle)) continue;
    out ??= { ...payload };
    out[field.handle] = MASKED;
  }
  return out ?? payload;
}
