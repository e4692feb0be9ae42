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

/** Read an `@path.json` import relative to the app root; refuse anything outside the root. */
async function readImport(spec: string, root: string, where: string): Promise<unknown> {
  const relative = spec.slice(1);
  const file = path.resolve(root, relative);
  const inside = path.relative(root, file);
  if (inside.startsWith('..') || path.isAbsolute(inside)) {
    throw new DefinitionIssue(where, `import "${spec}" points outside the application root`);
  }
  let text: string;
  try {
    text = await readTextFile(file);
  } catch (error) {
    throw new DefinitionIssue(where, `import "${spec}" cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new DefinitionIssue(where, `import "${spec}" is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Replace imports in `fields` (the whole value, or any single field) by the decoded
 * file. Returns a new fields value; the raw definition is left untouched so it can be
 * written back as the author wrote it.
 */
export async function resolveFieldImports(fields: unknown, root: string): Promise<unknown> {
  if (isImport(fields)) fields = await readImport(fields, root, '/fields');
  if (Array.isArray(fields)) {
    return Promise.all(fields.map((field, index) => (isImport(field) ? readImport(field, root, `/fields/${index}`) : field)));
  }
  if (fields && typeof fields === 'object') {
    const out: Record<string, unknown> = {};
    for (const [handle, field] of Object.entries(fields)) {
      out[handle] = isImport(field) ? await readImport(field, root, `/fields/${handle}`) : field;
    }
    return out;
  }
  return fields;
}
