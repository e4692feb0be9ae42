import path from 'node:path';
import { readTextFile, UnreadableTextError, type FileRoots } from '../../kernel/index.js';
import { IMPORT_PATTERN } from './definition-schema.js';

const importPattern = new RegExp(IMPORT_PATTERN);

/** A definition problem with the JSON path where it was found. */
export class DefinitionIssue extends Error {
  constructor(readonly path: string, message: string) {
    super(message);
    this.name = 'DefinitionIssue';
  }
}

export function isImport(value: unknown): value is string {
  return typeof value === 'string' && importPattern.test(value);
}

/** Where imports may point: the application root (files), or only the definitions folder (API payloads). */
export interface ImportScope {
  root: string;
  /** When set, the import must also lie inside this folder. */
  confine?: string;
  /** Links out of these roots are not followed (issue #27). */
  roots?: FileRoots;
  /** `streams.files.max_bytes`: a larger imported file is not read. */
  maxBytes?: number;
}

function inside(folder: string, file: string): boolean {
  const relative = path.relative(folder, file);
  return !relative.startsWith('..') && !path.isAbsolute(relative);
}

/**
 * Read an `@path.json` import relative to the app root; refuse anything outside the root
 * (and, for API payloads, outside the definitions folder: a client must not read the config
 * file's tokens into a definition). Errors never quote the file's content.
 */
async function readImport(spec: string, scope: ImportScope, where: string): Promise<unknown> {
  const relative = spec.slice(1);
  const file = path.resolve(scope.root, relative);
  if (!inside(scope.root, file)) {
    throw new DefinitionIssue(where, `import "${spec}" points outside the application root`);
  }
  if (scope.confine !== undefined && !inside(scope.confine, file)) {
    throw new DefinitionIssue(where, `import "${spec}" must stay inside the definitions folder when set over the API`);
  }
  // `..` and names that look inside can still lead out through a link: resolved, then checked.
  const outside = await scope.roots?.checkAsync(file);
  if (outside !== undefined) throw new DefinitionIssue(where, `import "${spec}" is not followed: ${outside}`);
  let text: string;
  try {
    text = await readTextFile(file, scope.maxBytes);
  } catch (error) {
    const why = error instanceof UnreadableTextError ? error.message : ((error as NodeJS.ErrnoException).code ?? String(error));
    throw new DefinitionIssue(where, `import "${spec}" cannot be read (${why})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    // Not the parser's message: it quotes the text, and the file may hold secrets.
    throw new DefinitionIssue(where, `import "${spec}" is not valid JSON`);
  }
  // Imports do not nest: an imported file naming another import would be read as a field
  // type, and one naming itself (or a file importing it back) is a cycle. Refused naming the chain.
  const nested = importsIn(value);
  if (nested.length > 0) {
    const chain = [spec, nested[0]!];
    const cycle = nested.includes(spec) ? ' (a cycle)' : '';
    throw new DefinitionIssue(where, `import "${spec}" imports "${nested[0]}"${cycle}: imports do not nest (${chain.join(' -> ')})`);
  }
  return value;
}

/** The import specs a value holds where `fields` would (the whole value, or each field). */
function importsIn(fields: unknown): string[] {
  if (isImport(fields)) return [fields];
  if (Array.isArray(fields)) return fields.filter(isImport);
  if (fields && typeof fields === 'object') return Object.values(fields).filter(isImport);
  return [];
}

/**
 * Replace imports in `fields` (the whole value, or any single field) by the decoded
 * file. Returns a new fields value; the raw definition is left untouched so it can be
 * written back as the author wrote it.
 */
export async function resolveFieldImports(fields: unknown, scope: ImportScope): Promise<unknown> {
  if (isImport(fields)) fields = await readImport(fields, scope, '/fields');
  if (Array.isArray(fields)) {
    return Promise.all(fields.map((field, index) => (isImport(field) ? readImport(field, scope, `/fields/${index}`) : field)));
  }
  if (fields && typeof fields === 'object') {
    const out: Record<string, unknown> = {};
    for (const [handle, field] of Object.entries(fields)) {
      out[handle] = isImport(field) ? await readImport(field, scope, `/fields/${handle}`) : field;
    }
    return out;
  }
  return fields;
}

/** The absolute files a raw definition imports (`@path.json` in `fields`): live sync watches them. */
export function importedFiles(raw: Record<string, unknown>, root: string): string[] {
  return [...new Set(importsIn(raw.fields).map((spec) => path.resolve(root, spec.slice(1))))];
}
