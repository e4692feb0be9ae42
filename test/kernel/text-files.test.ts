import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTextFile, readTextFileSync } from '../../kernel/index.js';

/** The synchronous reader filebase loads with (issue #16) reads what the async one reads. */
describe('readTextFileSync', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'text-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('strips a byte order mark, keeps multi-byte characters, and reads files larger than its buffer whole', async () => {
    const cases: Record<string, string> = {
      bom: '\ufeff{"id": 1, "name": "café"}',
      empty: '',
      // 64 KiB exactly and beyond, with a multi-byte character across the buffer's end.
      exact: 'x'.repeat(64 * 1024),
      large: `${'a'.repeat(64 * 1024 - 1)}é${'b'.repeat(70_000)}`,
    };
    for (const [name, text] of Object.entries(cases)) {
      const file = path.join(dir, `${name}.json`);
      writeFileSync(file, text);
      expect(readTextFileSync(file), name).toBe(await readTextFile(file));
      expect(readTextFileSync(file).startsWith('\ufeff'), name).toBe(false);
    }
    expect(readTextFileSync(path.join(dir, 'large.json')).length).toBe(64 * 1024 - 1 + 1 + 70_000);
    expect(() => readTextFileSync(path.join(dir, 'missing.json'))).toThrow(/ENOENT/);
  });
});
