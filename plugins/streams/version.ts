import { hash } from 'node:crypto';
import type { StreamDefinition } from './types.js';

/** Strong ETag per definition object (a change builds a new object or replaces `raw`). */
const versions = new WeakMap<object, { raw: unknown; tag: string }>();

/**
 * The strong ETag of a definition's stored version: a hash of its stored raw form (the
 * file's content, inline `self` data included, which `updateData` replaces in place).
 */
export function definitionVersion(definition: StreamDefinition): string {
  const cached = versions.get(definition);
  if (cached && cached.raw === definition.raw) return cached.tag;
  const tag = `"${hash('sha1', JSON.stringify(definition.raw), 'base64url')}"`;
  versions.set(definition, { raw: definition.raw, tag });
  return tag;
}
