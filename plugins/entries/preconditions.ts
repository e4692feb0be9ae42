import { hash } from 'node:crypto';
import { AppError } from '../../kernel/index.js';
import type { EntryAttributes } from '../fields/index.js';
import type { WriteCondition } from './contracts.js';

/** Strong ETag per stored entry object (a write stores a new object, so identity is the version). */
const versions = new WeakMap<object, string>();

/**
 * The strong ETag of a stored entry version: a hash of its stored attributes (protected
 * fields included, so a change the client cannot see still invalidates its copy).
 */
export function entryVersion(entry: EntryAttributes): string {
  let tag = versions.get(entry);
  if (tag === undefined) {
    tag = `"${hash('sha1', JSON.stringify(entry), 'base64url')}"`;
    versions.set(entry, tag);
  }
  return tag;
}

/** RFC 9110 strong comparison of an `If-Match` list against the current tag (`*`: any current entry). */
function ifMatchHolds(header: string, current: string | undefined): boolean {
  if (current === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((part) => part.trim() === current);
}

/** 412 unless the condition holds for the entry as stored now (undefined: no such entry). */
export function checkCondition(condition: WriteCondition | undefined, existing: EntryAttributes | undefined): void {
  if (!condition) return;
  const current = existing === undefined ? undefined : entryVersion(existing);
  if (condition.ifMatch !== undefined && !ifMatchHolds(condition.ifMatch, current)) {
    throw new AppError(412, current === undefined ? 'The entry does not exist (If-Match).' : 'The entry has changed since that version was read (If-Match); read it again and retry.');
  }
  if (condition.ifNoneMatch !== undefined && current !== undefined) {
    const header = condition.ifNoneMatch.trim();
    const stale = header === '*' || header.split(',').some((part) => part.trim().replace(/^W\//, '') === current);
    if (stale) throw new AppError(412, 'The entry already exists (If-None-Match).');
  }
}
