import type { ErrorObject } from 'ajv';
import type { ErrorElement } from '../../kernel/index.js';
import { errorElement, INVALID_MESSAGE, REQUIRED_MESSAGE } from './messages.js';
import { MESSAGE, RULE } from './stream-plan.js';

function pointerToField(pointer: string): string {
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

/**
 * ajv errors -> one element per failed rule. Every fragment the compiler emits carries
 * its rule and message (`x-rule`, `x-message`), found through `parentSchema`; errors
 * of unannotated wrappers (`if`, `anyOf` branches) are noise and dropped, unless a
 * field would otherwise get no element at all.
 */
export function mapAjvErrors(errors: ErrorObject[], fallbackRule: (field: string) => string): ErrorElement[] {
  const out: ErrorElement[] = [];
  const seen = new Set<string>();
  const unexplained: string[] = [];
  const add = (field: string, rule: string, message: string): void => {
    const key = `${field}\u0000${rule}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push(errorElement(message, field, rule));
  };
  for (const error of errors) {
    if (error.keyword === 'required') {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      add(pointerToField(`${error.instancePath}/${missing}`), 'required', REQUIRED_MESSAGE);
      continue;
    }
    const parent = error.parentSchema as Record<string, unknown> | undefined;
    const rule = parent?.[RULE];
    if (typeof rule === 'string') {
      add(pointerToField(error.instancePath), rule, typeof parent![MESSAGE] === 'string' ? (parent![MESSAGE] as string) : INVALID_MESSAGE);
    } else {
      unexplained.push(pointerToField(error.instancePath));
    }
  }
  for (const field of unexplained) {
    const top = field.split('.')[0]!;
    const taken = (f: unknown): boolean => f === top || String(f).startsWith(`${top}.`);
    if (!out.some((e) => taken(e.meta?.field))) {
      add(field, fallbackRule(top), INVALID_MESSAGE);
    }
  }
  return out;
}
