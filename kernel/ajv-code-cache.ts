import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ajv, ValidateFunction } from 'ajv';
import standaloneModule from 'ajv/dist/standalone/index.js';

/**
 * ajv's generated validator code, kept on disk between boots (issue #33, boot at scale).
 * Compiling the config, settings and definition schemas was ~100 ms of every boot before it
 * listened, where loading the same code ready-made takes a few: ajv's "standalone" output
 * (the code `compile` generates anyway) is written once and run again from the file.
 *
 * One file per schema, named by a digest of ajv's version, the instance's options, the
 * schema's JSON and this module's FORMAT: an edited schema (a plugin update, an addon's
 * definition extension) is a new name, never a stale validator. The folder sits next to this
 * module (dist/chunks/.ajv-cache when built and bundled), is as trusted as the code beside it, and goes
 * with dist/ on every build. Where it cannot be written (a read-only install) schemas are
 * compiled at each boot, as before.
 */
const FOLDER = fileURLToPath(new URL('./.ajv-cache/', import.meta.url));
/**
 * The apps' schemas (kernel/ajv.ts, `streamValidator`: each stream's entry schema and the
 * schemas of its fields that `matches` checks): a few per stream, and new files whenever a
 * definition changes, so a folder of their own whose files past the budget are removed oldest
 * first; ours are a handful per version and never removed.
 */
export const STREAM_SCHEMAS = { folder: path.join(FOLDER, 'streams'), budgetBytes: 8 * 1024 * 1024 };
const require = createRequire(import.meta.url);
const AJV_VERSION = (require('ajv/package.json') as { version: string }).version;
/** Part of every digest: raise it when what goes into a file changes (how the code is produced or run). */
const FORMAT = 1;
/**
 * ajv's code writer. Imported, not required on a miss as before: since ajv is bundled into
 * dist/ (kernel/bundle.js) the writer must be the bundle's too, the one whose classes the
 * validators it writes out were compiled with (its code generation checks `instanceof`).
 */
const standaloneCode = (ajv: Ajv, validate: ValidateFunction): string => (standaloneModule as unknown as { default: (ajv: Ajv, validate: ValidateFunction) => string }).default(ajv, validate);

/** The schema's JSON, or undefined when it holds what JSON cannot carry (functions, RegExps): not cached. */
function jsonOf(schema: object): string | undefined {
  let plain = true;
  const text = JSON.stringify(schema, (_key, value: unknown) => {
    if (typeof value === 'function' || typeof value === 'bigint' || typeof value === 'symbol' || value instanceof RegExp) plain = false;
    return value;
  });
  return plain ? text : undefined;
}

function load(file: string): ValidateFunction | undefined {
  let code: string;
  try {
    code = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const module = { exports: {} as unknown };
    // The file is ajv's own CommonJS output; it requires ajv's runtime helpers and ajv-formats.
    new Function('require', 'module', 'exports', code)(require, module, module.exports);
    return typeof module.exports === 'function' ? (module.exports as ValidateFunction) : undefined;
  } catch {
    return undefined; // unreadable (a torn disk, a newer ajv's helpers): compiled and written again
  }
}

function store(folder: string, file: string, code: string, budgetBytes: number): void {
  try {
    mkdirSync(folder, { recursive: true });
    // Written aside and renamed: boots in parallel (a test suite, a cluster on one disk) never read half a file.
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, code);
    try {
      renameSync(temp, file);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    if (budgetBytes !== Infinity) prune(folder, file, budgetBytes);
  } catch {
    // Not writable here: the next boot compiles again.
  }
}

/**
 * Keep `folder` within `budgetBytes`: the oldest files (by when they were written) go first,
 * down to three quarters of it so that the next few misses do not list it again; `kept`
 * (just written) stays. Runs on a miss only. A file removed under a boot that still needs it
 * is compiled and written again by that boot's next miss.
 */
function prune(folder: string, kept: string, budgetBytes: number): void {
  const files: { file: string; bytes: number; written: number }[] = [];
  let total = 0;
  for (const name of readdirSync(folder)) {
    const file = path.join(folder, name);
    try {
      const stats = statSync(file);
      files.push({ file, bytes: stats.size, written: stats.mtimeMs });
      total += stats.size;
    } catch {
      // removed meanwhile by a parallel boot
    }
  }
  if (total <= budgetBytes) return;
  files.sort((a, b) => a.written - b.written);
  for (const { file, bytes } of files) {
    if (total <= budgetBytes * 0.75) break;
    if (file === kept) continue;
    rmSync(file, { force: true });
    total -= bytes;
  }
}

/**
 * `schema` compiled by `ajv()` (an instance made with `code.source: true`, so its output can
 * be saved), or the same validator loaded from the cache. `options` names the instance's
 * options in the file's digest. `ajv` is only called on a miss. `folder`: where the files go;
 * `budgetBytes`: how much that folder may hold (see `prune`).
 */
export function cachedValidator(schema: object, options: string, ajv: () => Ajv, folder = FOLDER, budgetBytes = Infinity): ValidateFunction {
  const json = jsonOf(schema);
  if (json === undefined) return ajv().compile(schema);
  const name = createHash('sha256').update(`${FORMAT}\0${AJV_VERSION}\0${options}\0${json}`).digest('hex').slice(0, 40);
  const file = path.join(folder, `${name}.cjs`);
  const cached = load(file);
  if (cached !== undefined) return cached;
  const instance = ajv();
  const validate = instance.compile(schema);
  let code: string;
  try {
    code = standaloneCode(instance, validate);
  } catch {
    return validate; // a keyword defined by a function cannot be written out: compiled each boot
  }
  store(folder, file, code, budgetBytes);
  return validate;
}
