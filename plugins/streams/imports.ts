import path from 'node:path';
import { readTextFile } from '../../kernel/index.js';
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
  let text: string;
  try {
    text = await readTextFile(file);
  } catch (error) {
    throw new DefinitionIssue(where, `import "${spec}" cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Not the parser's message: it quotes the text, and the file may hold secrets.
    throw new DefinitionIssue(where, `import "${spec}" is not valid JSON`);
  }
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
  const fields = raw.fields;
  const specs: string[] = [];
  if (isImport(fields)) specs.push(fields);
  else if (Array.isArray(fields)) specs.push(...fields.filter(isImport));
  else if (fields && typeof fields === 'object') specs.push(...Object.values(fields).filter(isImport));
  return [...new Set(specs.map((spec) => path.resolve(root, spec.slice(1))))];
}
