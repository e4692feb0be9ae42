import path from 'node:path';
import { AppError, BadRequestError } from '../../kernel/index.js';

/** decisions.md "Keys and storage": keys that name files. */
export const FILE_KEY = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function isFileKey(id: string): boolean {
  return FILE_KEY.test(id) && id !== '.' && id !== '..';
}

export function assertFileKey(id: string): void {
  if (!isFileKey(id)) {
    throw new BadRequestError(
      `Invalid entry key "${id.length > 64 ? `${id.slice(0, 64)}...` : id}": keys stored as files must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$.`,
      { rule: 'key' },
    );
  }
}

/** True when `target` is `root` or inside it. */
export function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Resolve a definition's `source.path`/`source.file` against the app root, refusing
 * anything that escapes it (a definition written through the API must not reach
 * arbitrary files).
 */
export function resolveInRoot(root: string, given: string, what: string, stream: string): string {
  if (given.includes('\0')) throw new AppError(500, `Stream [${stream}]: ${what} contains a NUL byte.`);
  const absolute = path.resolve(root, given);
  if (!isInside(root, absolute)) {
    throw new AppError(500, `Stream [${stream}]: ${what} "${given}" is outside the application root.`);
  }
  return absolute;
}
