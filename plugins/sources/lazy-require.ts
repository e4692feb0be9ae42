import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A package loaded on first use, synchronously (parsing and writing files are): a boot whose
 * streams never need it never loads it. The YAML, front-matter and CSV libraries are tens of
 * modules that most apps never read a file with (issue #33, start-up).
 */
export function lazyRequire<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(specifier) as T);
}
