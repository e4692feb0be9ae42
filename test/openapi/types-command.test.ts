import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { REPO } from '../helpers/server-process.js';

const run = promisify(execFile);

/** Issue #18: `npm run types` writes TypeScript types of every stream, and they type-check a typed fetch. */
describe('npm run types', () => {
  let app: TestApp;
  let dir: string;
  beforeAll(async () => {
    app = await startApp({ streams: { books: { fields: { id: 'integer', title: { type: 'string', required: true }, status: { type: 'select', config: { options: ['draft', 'published'] } } } } } });
    dir = await mkdtemp(path.join(os.tmpdir(), 'types-'));
  });
  afterAll(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('generates types from the live document that a typed client compiles against', async () => {
    const out = path.join(dir, 'streams-api.ts');
    const { stdout } = await run(process.execPath, [path.join(REPO, 'dist/plugins/openapi/types-command.js'), '--url', app.url, '--out', out]);
    expect(stdout).toContain('wrote');
    const types = await readFile(out, 'utf8');
    expect(types).toContain('"/api/streams/books/entries/{key}"');
    expect(types).toContain('"books.Entry"');
    // The docs' typed fetch, compiled strictly: a wrong field would be a type error.
    await writeFile(
      path.join(dir, 'client.ts'),
      `import type { components } from './streams-api.js';
type Book = components['schemas']['books.Entry'];
// A required field is always answered: its type is the field's, not \`| undefined\`.
export function title(book: Book): string { const t: string = book.title; return t; }
export const status: Book['status'] = 'draft';
`,
    );
    await writeFile(path.join(dir, 'bad.ts'), `import type { components } from './streams-api.js';\nexport const s: components['schemas']['books.Entry']['status'] = 'archived';\n`);
    const tsc = path.join(REPO, 'node_modules/typescript/bin/tsc');
    const flags = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck'];
    await run(process.execPath, [tsc, ...flags, path.join(dir, 'client.ts')]);
    await expect(run(process.execPath, [tsc, ...flags, path.join(dir, 'bad.ts')])).rejects.toMatchObject({ stdout: expect.stringContaining('archived') });
  }, 60_000);
});
