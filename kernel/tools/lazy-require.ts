import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A package loaded on first use, synchronously (parsing and writing files are): a boot whose
 * streams never need it never loads it. The YAML, front-matter and CSV libraries are tens of
 * modules that most apps never read a file with; the slug type's transliteration table builds
 * its patterns when loaded (issue #33, start-up). An ES-module-only package loads too
 * (`require(esm)`, without a warning on every Node this runs on) when it has no top-level await.
 */
export function lazyRequire<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(specifier) as T);
}
